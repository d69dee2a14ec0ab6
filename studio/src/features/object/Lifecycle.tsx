// Deleting and restoring the open object (soft delete, docs/studio.md):
// Delete asks first (not while edits are unsaved: save or discard them
// first); a deleted object says so above its values, shows them read-only
// and offers Restore to a writer, like an archived entry elsewhere: what
// Delivery no longer shows is not edited on the quiet. The lists' deleted
// filter finds it.
import { useState } from "preact/hooks";
import { deleteObjects, restoreObjects } from "../../data/list";
import { messages } from "../../i18n/i18n";
import { Button, Dialog, problemText, toast } from "../../ui/ui";

const m = messages({
  en: {
    delete: "Delete", restore: "Restore", cancel: "Cancel", deleted: "Deleted.", restored: "Restored.",
    deleteNamed: "Delete {name}", restoreNamed: "Restore {name}",
    confirm: "Delete “{name}”?",
    confirmText: "A deleted object leaves Delivery and the live lists; the list's “Deleted” filter shows it, and Restore brings it back with its values.",
    saveFirst: "Save or discard your changes first",
    isDeleted: "This object is deleted: Delivery and the live lists no longer show it (the list's “Deleted” filter does).",
    restoreToEdit: "Restore it to change it.",
  },
  de: {
    delete: "Löschen", restore: "Wiederherstellen", cancel: "Abbrechen", deleted: "Gelöscht.", restored: "Wiederhergestellt.",
    deleteNamed: "{name} löschen", restoreNamed: "{name} wiederherstellen",
    confirm: "„{name}“ löschen?",
    confirmText: "Ein gelöschtes Objekt verschwindet aus Delivery und den Listen; der Filter „Gelöschte“ der Liste zeigt es, und Wiederherstellen holt es mit seinen Werten zurück.",
    saveFirst: "Speichern oder verwerfen Sie zuerst Ihre Änderungen",
    isDeleted: "Dieses Objekt ist gelöscht: Delivery und die Listen zeigen es nicht mehr (der Filter „Gelöschte“ der Liste schon).",
    restoreToEdit: "Stellen Sie es wieder her, um es zu ändern.",
  },
});

/** LifecycleAction is the open object's Delete (asking first) or, once deleted, Restore; onDone gets the write's transaction. */
export function LifecycleAction(props: { branch: string; id: number; name: string; deleted: boolean; dirty: boolean; onDone: (tx: number) => void }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const run = async (what: "delete" | "restore") => {
    setBusy(true);
    try {
      const tx = what === "delete" ? await deleteObjects(props.branch, [props.id]) : await restoreObjects(props.branch, [props.id]);
      setAsking(false);
      toast(m(what === "delete" ? "deleted" : "restored"));
      props.onDone(tx);
    } catch (e) {
      toast(problemText(e), "error");
    } finally {
      setBusy(false);
    }
  };
  // Named after the object: the comments below have Delete buttons of their own.
  if (props.deleted) {
    return <Button onClick={() => void run("restore")} disabled={busy} aria-label={m("restoreNamed", { name: props.name })}>{m("restore")}</Button>;
  }
  return (
    <>
      <Button variant="danger" onClick={() => setAsking(true)} disabled={props.dirty || busy}
        aria-label={m("deleteNamed", { name: props.name })} title={props.dirty ? m("saveFirst") : undefined}>{m("delete")}</Button>
      {asking && (
        <Dialog title={m("confirm", { name: props.name })} onClose={() => setAsking(false)}
          footer={<>
            <Button onClick={() => setAsking(false)}>{m("cancel")}</Button>
            <Button variant="danger" disabled={busy} onClick={() => void run("delete")}>{m("delete")}</Button>
          </>}>
          <p>{m("confirmText")}</p>
        </Dialog>
      )}
    </>
  );
}

/** DeletedNotice says the open object is deleted (and, to a writer, how to change it again). */
export function DeletedNotice(props: { canRestore: boolean }) {
  return (
    <div class="notice notice-warn object-deleted" role="status">
      <span>{m("isDeleted")}{props.canRestore && ` ${m("restoreToEdit")}`}</span>
    </div>
  );
}
