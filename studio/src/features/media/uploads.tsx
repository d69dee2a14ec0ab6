// The uploads of this tab: one queue for the page's lifetime (an upload
// goes on while the editor looks at another section), each with its
// progress bar, Pause/Resume, the duplicate notice and what to do with the
// stored file: create a binary proxy object, or, for a replacement, point
// the object at it.
import { useState } from "preact/hooks";
import { createBpo, nameOfFile, removeUpload, replaceFile, send } from "../../data/media";
import { extensionOf, Queue, Upload } from "../../data/upload";
import { createStore, useStore } from "../../store";
import { Button, problemText, toast } from "../../ui/ui";
import { formatBytes, m } from "./messages";

/** Entry is an upload and what it is for. */
export interface Entry {
  key: number;
  u: Upload;
  /** A replacement of this object's file (else a new file). */
  replace?: { branch: string; id: number; name: string } | undefined;
  /** The object created from the upload, or the one whose file it replaced. */
  object?: { branch: string; id: number; type: number; tx: number } | undefined;
  busy?: boolean;
  error?: unknown;
}

const queue = new Queue(2);
export const entries = createStore<Entry[]>([]);
/** announce is the last sentence for screen readers (one polite live region). */
export const announce = createStore("");
/** written is the last transaction a media write made: the grid reads at it (X-Cms-Min-Version). */
export const written = createStore(0);
let keys = 0;

const bump = () => entries.update((es) => [...es]);
queue.onChange = bump;

/** addFiles queues files for upload (a replacement when replace is given: one file). */
export function addFiles(files: readonly File[], replace?: Entry["replace"]) {
  for (const f of files) {
    const e: Entry = { key: ++keys, u: new Upload(f, f.name, extensionOf(f.name), send), replace };
    let last = e.u.state;
    e.u.onChange = () => {
      if (e.u.state !== last) {
        last = e.u.state;
        if (last === "done") {
          announce.set(m("announceDone", { name: f.name }));
          if (e.replace) void finishReplace(e);
        }
        if (last === "failed" && e.u.error) announce.set(m("announceFailed", { name: f.name }));
      }
    };
    entries.update((es) => [...es, e]);
    queue.add(e.u);
  }
}

async function finishReplace(e: Entry) {
  const r = e.replace;
  if (!r || !e.u.result) return;
  e.busy = true;
  bump();
  try {
    const tx = await replaceFile(r.branch, r.id, e.u.result, e.u.name);
    e.object = { branch: r.branch, id: r.id, type: 0, tx };
    written.set(tx);
    toast(m("replaced", { name: r.name }));
  } catch (err) {
    e.error = err;
  } finally {
    e.busy = false;
    bump();
  }
}

async function create(e: Entry, branch: string, type: number, language: number, onCreated: (id: number) => void) {
  if (!e.u.result) return;
  e.busy = true;
  e.error = undefined;
  bump();
  try {
    const { id, tx } = await createBpo(branch, type, e.u.result, e.u.name, language);
    e.object = { branch, id, type, tx };
    written.set(tx);
    toast(m("created", { name: nameOfFile(e.u.name, e.u.result.extension) }));
    onCreated(id);
  } catch (err) {
    e.error = err;
  } finally {
    e.busy = false;
    bump();
  }
}

function dismiss(e: Entry) {
  if (e.u.state !== "done" && e.u.state !== "failed") void e.u.cancel(removeUpload);
  entries.update((es) => es.filter((x) => x !== e));
}

/** Uploads lists this tab's uploads; type is the media type new objects get (0: none to create). */
export function Uploads(p: { branch: string; type: number; language: number; onCreated: (id: number) => void }) {
  const es = useStore(entries);
  const said = useStore(announce);
  const num = (n: number, d: number) => new Intl.NumberFormat(undefined, { maximumFractionDigits: d }).format(n);
  return (
    <section class="uploads" aria-labelledby="uploads-title" hidden={es.length === 0}>
      <h2 class="section-title" id="uploads-title">{m("uploads")}</h2>
      <p class="visually-hidden" aria-live="polite">{said}</p>
      <ul class="upload-list">
        {es.map((e) => {
          const u = e.u;
          const name = u.name;
          const pct = u.size === 0 ? (u.state === "done" ? 100 : 0) : Math.round((u.acked / u.size) * 100);
          return (
            <li key={e.key} class={`upload upload-${u.state}`} data-state={u.state} data-sent={u.sent} data-acked={u.acked} data-size={u.size}>
              <div class="upload-head">
                <span class="upload-name">{name}</span>
                <span class="muted upload-bytes">{m("bytes", { done: formatBytes(u.acked, num), total: formatBytes(u.size, num) })}</span>
                <span class="upload-state">{m(`st_${u.state}`)}</span>
              </div>
              <progress max={100} value={pct} aria-label={m("progress", { name })} aria-valuetext={`${pct} %`} />
              {e.replace && <p class="muted">{m("replacing", { name: e.replace.name })}</p>}
              {u.result && !u.result.created && <p class="notice upload-duplicate" role="status">{m("duplicate", { name })}</p>}
              {u.state === "failed" && u.error !== null && <div class="problem" role="alert">{problemText(u.error)}</div>}
              {e.error !== undefined && <div class="problem" role="alert">{problemText(e.error)}</div>}
              <div class="upload-actions">
                {(u.state === "uploading" || u.state === "reconnecting" || u.state === "queued") && (
                  <Button aria-label={m("pauseNamed", { name })} onClick={() => u.pause()}>{m("pause")}</Button>
                )}
                {u.state === "paused" && (
                  <Button aria-label={m("resumeNamed", { name })} onClick={() => queue.resume(u)}>{m("resume")}</Button>
                )}
                {u.state === "done" && !e.replace && !e.object && p.type > 0 && (
                  <Button variant="primary" aria-label={m("createNamed", { name })} disabled={e.busy}
                    onClick={() => void create(e, p.branch, p.type, p.language, p.onCreated)}>{m("createObject")}</Button>
                )}
                {e.object && e.object.branch === p.branch && (
                  <Button onClick={() => e.object && p.onCreated(e.object.id)}>{m("open")}</Button>
                )}
                <Button variant="ghost" aria-label={(u.state === "done" || u.state === "failed" ? m("dismissNamed", { name }) : m("cancelNamed", { name }))}
                  onClick={() => dismiss(e)}>{u.state === "done" || u.state === "failed" ? m("dismiss") : m("cancel")}</Button>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** DropZone takes files dropped on it or chosen with its button (keyboard: the button). */
export function DropZone(p: { onFiles: (files: File[]) => void; disabled?: boolean }) {
  const [over, setOver] = useState(false);
  const [input, setInput] = useState<HTMLInputElement | null>(null);
  return (
    <div class={`drop-zone ${over ? "drop-over" : ""}`}
      onDragOver={(ev) => {
        ev.preventDefault();
        if (ev.dataTransfer) ev.dataTransfer.dropEffect = "copy";
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(ev) => {
        ev.preventDefault();
        setOver(false);
        const files = [...(ev.dataTransfer?.files ?? [])];
        if (files.length && !p.disabled) p.onFiles(files);
      }}>
      <span>{m("drop")}</span>
      <Button variant="primary" disabled={p.disabled} onClick={() => input?.click()}>{m("choose")}</Button>
      <input ref={setInput} type="file" multiple class="visually-hidden" tabIndex={-1} aria-label={m("filesToUpload")}
        disabled={p.disabled}
        onChange={(ev) => {
          const files = [...(ev.currentTarget.files ?? [])];
          ev.currentTarget.value = "";
          if (files.length) p.onFiles(files);
        }} />
    </div>
  );
}
