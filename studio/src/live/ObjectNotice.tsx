// The open object's live notice: "<user> changed this object just now",
// with "Show changes" and "Reload" while the editor has unsaved edits (the
// rule is ./notice.ts). For the object editor:
//
//   <ObjectNotice branch={branch} id={id} dirty={hasUnsavedEdits}
//     onReload={() => reloadFromServer()} onShowChanges={() => openTheDiff()} />
//
// onReload is called by itself when there are no unsaved edits, and by the
// "Reload" button otherwise (then it drops the edits: the button says so).
import { useEffect, useRef, useState } from "preact/hooks";
import { locale, messages } from "../i18n/i18n";
import { useStore } from "../store";
import { Avatar, Button } from "../ui/ui";
import { userName } from "./activity";
import { useLiveObject } from "./hooks";
import { noticeOf, type Notice } from "./notice";
import "./live.css";

const m = messages({
  en: {
    updated: "{user} changed this object just now.",
    updatedKept: "{user} changed this object just now. Your unsaved edits are kept.",
    deleted: "{user} deleted this object just now. Your edits cannot be saved here; copy what you need.",
    branchDeleted: "{user} deleted this branch just now. Your edits cannot be saved here; copy what you need.",
    comment: "{user} commented on this object just now.",
    reset: "The connection was interrupted; the object was reloaded.",
    resetKept: "The connection was interrupted; this object may have changed. Your unsaved edits are kept.",
    someone: "Someone",
    showChanges: "Show changes",
    reload: "Reload (drop my edits)",
    dismiss: "Dismiss",
  },
  de: {
    updated: "{user} hat dieses Objekt gerade geändert.",
    updatedKept: "{user} hat dieses Objekt gerade geändert. Ihre ungespeicherten Änderungen bleiben erhalten.",
    deleted: "{user} hat dieses Objekt gerade gelöscht. Ihre Änderungen können hier nicht gespeichert werden; kopieren Sie, was Sie brauchen.",
    branchDeleted: "{user} hat diesen Branch gerade gelöscht. Ihre Änderungen können hier nicht gespeichert werden; kopieren Sie, was Sie brauchen.",
    comment: "{user} hat dieses Objekt gerade kommentiert.",
    reset: "Die Verbindung war unterbrochen; das Objekt wurde neu geladen.",
    resetKept: "Die Verbindung war unterbrochen; dieses Objekt kann sich geändert haben. Ihre ungespeicherten Änderungen bleiben erhalten.",
    someone: "Jemand",
    showChanges: "Änderungen zeigen",
    reload: "Neu laden (meine Änderungen verwerfen)",
    dismiss: "Schließen",
  },
});

export function ObjectNotice(props: { branch: string; id: number | string; dirty: boolean; onReload: () => void; onShowChanges?: () => void }) {
  const l = useStore(locale);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [user, setUser] = useState("");
  const dirty = useRef(props.dirty);
  dirty.current = props.dirty;
  const reload = useRef(props.onReload);
  reload.current = props.onReload;
  useLiveObject(props.branch, props.id, (c) => {
    const n = noticeOf(c, dirty.current);
    if (!n) return;
    setNotice(n);
    setUser(n.user);
    if (n.autoReload) reload.current();
  });
  useEffect(() => setNotice(null), [props.branch, props.id]);
  useEffect(() => {
    if (!notice?.user) return undefined;
    let alive = true;
    void userName(notice.user, l === "de" ? [202, 201] : [201, 202]).then((u) => alive && setUser(u));
    return () => {
      alive = false;
    };
  }, [notice?.version, l]);
  if (!notice) return null;
  const who = user || m("someone");
  const text =
    notice.kind === "updated" ? m(notice.offerReload ? "updatedKept" : "updated", { user: who })
    : notice.kind === "reset" ? m(notice.offerReload ? "resetKept" : "reset")
    : m(notice.kind, { user: who });
  return (
    <div class={`live-notice live-notice-${notice.kind}`} role="status">
      <Avatar name={who} title={notice.user} />
      <span class="live-notice-text">{text}</span>
      <span class="live-notice-actions">
        {notice.offerShowChanges && props.onShowChanges && <Button onClick={props.onShowChanges}>{m("showChanges")}</Button>}
        {notice.offerReload && (
          <Button onClick={() => {
            setNotice(null);
            props.onReload();
          }}>{m("reload")}</Button>
        )}
        <Button variant="ghost" onClick={() => setNotice(null)}>{m("dismiss")}</Button>
      </span>
    </div>
  );
}
