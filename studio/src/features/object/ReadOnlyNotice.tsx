// The studio's read-only notice: why what is shown cannot be changed here.
// No write grant on the branch (known when the view opened), or one
// removed while the view was open (a save, a Delete or Restore answered
// 403, or the studio's re-check found it gone: see src/live/access.ts).
// One component for the object editor, a type's list and the model; each
// passes its wording (objectReadOnlyText is the object editor's, whose
// unsaved changes stay in this browser).
import type { ComponentChildren } from "preact";
import type { Access, RevokedBy } from "../../data/access";
import { messages } from "../../i18n/i18n";
import { Lock } from "../../ui/ui";

const m = messages({
  en: {
    readOnly: "Read only: you may read branch {branch} but not change it (you have no write permission there). Ask an administrator for a write grant to edit.",
    revoked: "Your write permission on branch {branch} was removed while you were editing: the save was refused. Ask an administrator for a write grant; until then nothing can be saved here.",
    removed: "Your write permission on branch {branch} was removed while this object was open: it is read only now, and nothing can be saved here. Ask an administrator for a write grant; once it is back, you can edit again.",
    kept: "Your unsaved changes are kept in this browser.",
    server: "The server says: {detail}",
  },
  de: {
    readOnly: "Nur lesen: Sie dürfen den Branch {branch} lesen, aber nicht ändern (Sie haben dort keine Schreibberechtigung). Bitten Sie eine Administratorin oder einen Administrator um eine Schreibberechtigung.",
    revoked: "Ihre Schreibberechtigung auf dem Branch {branch} wurde entzogen, während Sie bearbeitet haben: das Speichern wurde abgelehnt. Bitten Sie eine Administratorin oder einen Administrator um eine Schreibberechtigung; bis dahin kann hier nichts gespeichert werden.",
    removed: "Ihre Schreibberechtigung auf dem Branch {branch} wurde entzogen, während dieses Objekt geöffnet war: es ist jetzt schreibgeschützt, und hier kann nichts gespeichert werden. Bitten Sie eine Administratorin oder einen Administrator um eine Schreibberechtigung; sobald sie wieder da ist, können Sie weiter bearbeiten.",
    kept: "Ihre ungespeicherten Änderungen bleiben in diesem Browser erhalten.",
    server: "Der Server sagt: {detail}",
  },
});

/** objectReadOnlyText is the object editor's wording for its read-only notice on branch (named for people). */
export function objectReadOnlyText(a: Extract<Access, { kind: "read" }>, branch: string, dirty: boolean): string {
  const text = m(!a.revoked ? "readOnly" : a.by === "save" ? "revoked" : "removed", { branch });
  return dirty ? `${text} ${m("kept")}` : text;
}

/**
 * ReadOnlyNotice says why nothing can be changed here, in the wording
 * given as children: a status for a reader, an alert for a grant removed
 * while the view was open (revoked, found by: data-revoked-by), with the
 * server's detail when given.
 */
export function ReadOnlyNotice(props: { revoked?: boolean | undefined; by?: RevokedBy | undefined; detail?: string | undefined; children: ComponentChildren }) {
  const revoked = props.revoked === true;
  return (
    <div class={`notice read-only ${revoked ? "notice-warn" : ""}`} role={revoked ? "alert" : "status"} data-access={revoked ? "revoked" : "read"} data-revoked-by={revoked ? props.by : undefined}>
      <span>
        <Lock />{" "}
        {props.children}
        {props.detail && <span class="muted small read-only-detail"> {m("server", { detail: props.detail })}</span>}
      </span>
    </div>
  );
}
