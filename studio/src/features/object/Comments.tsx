// The comments of the open object (beside the editor): newest first, each
// with its author's display name, when it was written and whether it was
// edited; write one, and edit or delete one's own. Only Management's
// comment operations (GetComments, CreateComment, UpdateComment,
// DeleteComment) and GetUserDisplayName. The list reloads when the change
// stream says a comment on the object was written, changed or deleted
// (event kind "comment", this tab's own too), and on a reset. A comment has
// no transaction, so each write first tells the hub to take the object's
// next comment event by the same user as this tab's (Hub.noteComment).
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "../../api/client";
import type { CmsComment } from "../../api/generated/management";
import { api, session } from "../../auth/session";
import { bodyBytes, edited, fromBody, maxBodyBytes, toBody } from "../../data/comments";
import { actions } from "../../i18n/actions";
import { formatDateTime, formatNumber, locale, messages } from "../../i18n/i18n";
import { userName } from "../../live/activity";
import { live } from "../../live/changes";
import { useLiveObject } from "../../live/hooks";
import { uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Problem, Skeleton, toast } from "../../ui/ui";

const m = messages({
  en: {
    comments: "Comments", count: "{n} comments", one: "1 comment", none: "No comments yet.", write: "Write a comment", comment: "comment",
    adding: "Adding…", edit: "Edit", editOf: "Edit the comment of {time}", del: "Delete", delOf: "Delete the comment of {time}",
    save: "Save comment", cancel: "Cancel", edited: "edited", added: "Comment added.", updated: "Comment saved.", deleted: "Comment deleted.",
    tooLong: "This comment is too long: {n} bytes, at most {max}.", gone: "This comment was deleted meanwhile.", text: "Comment text",
  },
  de: {
    comments: "Kommentare", count: "{n} Kommentare", one: "1 Kommentar", none: "Noch keine Kommentare.", write: "Kommentar schreiben",
    comment: "Kommentar", adding: "Wird hinzugefügt…", edit: "Bearbeiten", editOf: "Kommentar vom {time} bearbeiten", del: "Löschen",
    delOf: "Kommentar vom {time} löschen", save: "Kommentar speichern", cancel: "Abbrechen", edited: "bearbeitet", added: "Kommentar hinzugefügt.",
    updated: "Kommentar gespeichert.", deleted: "Kommentar gelöscht.", tooLong: "Dieser Kommentar ist zu lang: {n} Bytes, höchstens {max}.",
    gone: "Dieser Kommentar wurde inzwischen gelöscht.", text: "Kommentartext",
  },
});

/** maxShown bounds the comments read (the newest). */
const maxShown = 100;

function tooLong(text: string): string | null {
  const n = bodyBytes(text);
  return n > maxBodyBytes ? m("tooLong", { n: formatNumber(n), max: formatNumber(maxBodyBytes) }) : null;
}

/** Author is a user's display name (read once per user), the user name until it is known. */
function Author({ user }: { user: string }) {
  const l = useStore(locale);
  const [name, setName] = useState(user);
  useEffect(() => {
    let live = true;
    void userName(user, uiLanguages(l)).then((n) => live && setName(n));
    return () => { live = false; };
  }, [user, l]);
  return <span class="comment-author" title={user}>{name}</span>;
}

export function Comments(props: { branch: string; branchId: number; objectId: number; readOnly: boolean }) {
  useStore(locale);
  const me = useStore(session)?.user ?? "";
  const [list, setList] = useState<CmsComment[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<{ id: number; text: string } | null>(null);

  const reload = useCallback(async () => {
    try {
      const { data } = await api.call("management", "GetComments", { branchRef: props.branchId, objectRef: props.objectId, isDeleted: false, take: maxShown });
      setList((data.cmsComments ?? []).filter((c) => !c.deleted));
      setError(null);
    } catch (e) {
      setError(e);
    }
  }, [props.branchId, props.objectId]);
  useEffect(() => { void reload(); }, [reload]);
  useLiveObject(props.branch, props.objectId, (c) => {
    if (c.kind === "comment" || c.kind === "reset") void reload();
  });

  const act = async (f: () => Promise<unknown>, done: string) => {
    setBusy(true);
    live.noteComment(props.objectId, me); // its event is this tab's: no notice, no count on the indicator
    try {
      await f();
      toast(done);
      await reload();
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        toast(m("gone"), "error");
        await reload();
      } else setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };

  const add = async (ev: Event) => {
    ev.preventDefault();
    if (!draft.trim() || tooLong(draft)) return;
    if (await act(() => api.call("management", "CreateComment", {}, { branchId: props.branchId, objectRef: props.objectId, body: toBody(draft) }), m("added"))) setDraft("");
  };
  const saveEdit = async (ev: Event) => {
    ev.preventDefault();
    if (!editing || !editing.text.trim() || tooLong(editing.text)) return;
    const { id, text } = editing;
    if (await act(() => api.call("management", "UpdateComment", { commentId: id }, { body: toBody(text) }), m("updated"))) setEditing(null);
  };
  const remove = (id: number) => void act(() => api.call("management", "DeleteComment", { commentId: id }), m("deleted"));

  const draftError = tooLong(draft);
  const editError = editing ? tooLong(editing.text) : null;
  return (
    <section class="comments" aria-labelledby="comments-title">
      <h2 id="comments-title" class="comments-title">
        {m("comments")}
        {list && list.length > 0 && <span class="comments-count muted"> · {list.length === 1 ? m("one") : m("count", { n: formatNumber(list.length) })}</span>}
      </h2>
      {error !== null && <Problem error={error} />}
      {!props.readOnly && (
        <form class="comment-form" onSubmit={(ev) => void add(ev)}>
          <label for="comment-new">{m("write")}</label>
          <textarea id="comment-new" class="input" rows={3} value={draft} aria-invalid={draftError ? "true" : undefined}
            aria-describedby={draftError ? "comment-new-error" : undefined}
            onInput={(ev) => setDraft(ev.currentTarget.value)}
            onKeyDown={(ev) => { if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") void add(ev); }} />
          {draftError && <div class="field-error" id="comment-new-error" role="alert">{draftError}</div>}
          <div><Button type="submit" variant="primary" disabled={busy || !draft.trim() || !!draftError}
            aria-label={busy ? undefined : actions("addThing", { thing: m("comment") })}>{busy ? m("adding") : actions("add")}</Button></div>
        </form>
      )}
      {list === null ? <div aria-busy="true"><Skeleton lines={2} /></div> : list.length === 0 ? <p class="muted">{m("none")}</p> : (
        <ul class="comment-list">
          {list.map((c) => {
            const time = c.created ? formatDateTime(c.created) : "";
            const mine = !!me && c.user === me && !props.readOnly;
            const ed = editing?.id === c.id ? editing : null;
            return (
              <li key={c.id} class="comment" data-comment={c.id}>
                <div class="comment-head">
                  <Author user={c.user ?? ""} />
                  <span class="muted">{time}{edited(c) && <> · <span title={c.modified ? formatDateTime(c.modified) : undefined}>{m("edited")}</span></>}</span>
                  {mine && !ed && (
                    <span class="comment-actions">
                      <Button class="btn-ghost btn-small" aria-label={m("editOf", { time })} onClick={() => setEditing({ id: c.id ?? 0, text: fromBody(c.body) })}>{m("edit")}</Button>
                      <Button class="btn-ghost btn-small" aria-label={m("delOf", { time })} disabled={busy} onClick={() => remove(c.id ?? 0)}>{m("del")}</Button>
                    </span>
                  )}
                </div>
                {ed ? (
                  <form class="comment-form" onSubmit={(ev) => void saveEdit(ev)}>
                    <label for={`comment-edit-${c.id}`} class="visually-hidden">{m("text")}</label>
                    <textarea id={`comment-edit-${c.id}`} class="input" rows={3} value={ed.text} aria-invalid={editError ? "true" : undefined}
                      onInput={(ev) => setEditing({ id: ed.id, text: ev.currentTarget.value })}
                      onKeyDown={(ev) => { if (ev.key === "Escape") setEditing(null); }} />
                    {editError && <div class="field-error" role="alert">{editError}</div>}
                    <div class="comment-actions">
                      <Button type="submit" variant="primary" disabled={busy || !ed.text.trim() || !!editError}>{m("save")}</Button>
                      <Button onClick={() => setEditing(null)}>{m("cancel")}</Button>
                    </div>
                  </form>
                ) : <p class="comment-body">{fromBody(c.body)}</p>}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
