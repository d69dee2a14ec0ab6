// Why the object cannot be changed here: no write grant on the branch
// (known when the view opened), or one removed while the object was open
// (a save answered 403, or the studio's re-check found it gone: see
// src/live/access.ts); the editor's unsaved changes stay in this browser.
import type { Access } from "../../data/access";
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

export function ReadOnlyNotice(props: { access: Extract<Access, { kind: "read" }>; branch: string; dirty: boolean }) {
  const a = props.access;
  return (
    <div class={`notice read-only ${a.revoked ? "notice-warn" : ""}`} role={a.revoked ? "alert" : "status"} data-access={a.revoked ? "revoked" : "read"} data-revoked-by={a.revoked ? a.by : undefined}>
      <span>
        <Lock />{" "}
        {m(!a.revoked ? "readOnly" : a.by === "save" ? "revoked" : "removed", { branch: props.branch })}
        {props.dirty && ` ${m("kept")}`}
        {a.detail && <span class="muted small read-only-detail"> {m("server", { detail: a.detail })}</span>}
      </span>
    </div>
  );
}
