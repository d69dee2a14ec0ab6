// One file of the media library: its thumbnail, names and content, Download,
// Replace file (an upload, then the object points at the new content) and
// where it is used (the objects whose file references name it).
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../auth/session";
import { download, itemOfDelivery, type MediaItem, type Usage, whereUsed } from "../../data/media";
import { locale } from "../../i18n/i18n";
import { uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Pane, Problem, Skeleton } from "../../ui/ui";
import { m } from "./messages";
import { Thumb } from "./thumb";
import { addFiles, written } from "./uploads";

export function MediaDetails(p: { branch: string; id: number; onClose: () => void; onOpenObject: (typeRef: number, id: number) => void }) {
  const minVersion = useStore(written);
  const l = useStore(locale);
  const [item, setItem] = useState<MediaItem | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [usages, setUsages] = useState<Usage[] | null>(null);
  const [usageError, setUsageError] = useState<unknown>(null);
  const [downloading, setDownloading] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const ac = new AbortController();
    setError(null);
    api.call("delivery", "Get", { branch: p.branch, id: String(p.id), props: 1, deleted: false }, undefined,
      { signal: ac.signal, minVersion: minVersion || undefined })
      .then(({ data }) => data.obj && setItem(itemOfDelivery(data.obj)), (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [p.branch, p.id, minVersion]);
  useEffect(() => {
    const ac = new AbortController();
    setUsageError(null);
    whereUsed(p.branch, p.id, uiLanguages(l), minVersion || undefined, ac.signal).then(setUsages, (e) => !ac.signal.aborted && setUsageError(e));
    return () => ac.abort();
  }, [p.branch, p.id, minVersion, l]);
  const name = item?.name || `#${p.id}`;
  return (
    <Pane title={item ? name : m("details")} class="media-details" label={m("details")}
      actions={<Button variant="ghost" onClick={p.onClose}>{m("close")}</Button>}>
      {error !== null && <Problem error={error} />}
      {!item && error === null && <Skeleton lines={5} />}
      {item && (
        <>
          <Thumb key={item.md5} branch={p.branch} item={item} size={512} />
          <dl class="media-facts">
            <dt>{m("fileName")}</dt><dd>{item.fileName || "–"}</dd>
            <dt>{m("extension")}</dt><dd>{item.extension || "–"}</dd>
            <dt>{m("content")}</dt><dd class="mono">{item.md5 || "–"}</dd>
          </dl>
          <div class="media-actions">
            <Button variant="primary" aria-label={m("downloadNamed", { name })} disabled={!item.md5 || downloading}
              onClick={async () => {
                setDownloading(true);
                try {
                  await download(item);
                } catch (e) {
                  setError(e);
                } finally {
                  setDownloading(false);
                }
              }}>{m("download")}</Button>
            <Button aria-label={m("replaceNamed", { name })} onClick={() => input.current?.click()}>{m("replace")}</Button>
            <input ref={input} type="file" class="visually-hidden" tabIndex={-1} aria-label={m("replaceNamed", { name })}
              onChange={(ev) => {
                const f = ev.currentTarget.files?.[0];
                ev.currentTarget.value = "";
                if (f) addFiles([f], { branch: p.branch, id: p.id, name });
              }} />
          </div>
          <h3 class="section-title" id="where-used">{m("whereUsed")}</h3>
          {usageError !== null && <Problem error={usageError} />}
          {!usages && usageError === null && <p class="muted">{m("loading")}</p>}
          {usages && usages.length === 0 && <p class="muted">{m("notUsed")}</p>}
          {usages && usages.length > 0 && (
            <ul class="where-used" aria-labelledby="where-used">
              {usages.map((u) => (
                <li key={u.id}>
                  <a href={`/studio/b/${encodeURIComponent(p.branch)}/content/${u.typeRef}/${u.id}`}
                    onClick={(e) => {
                      e.preventDefault();
                      p.onOpenObject(u.typeRef, u.id);
                    }}>{u.name}</a>
                  <span class="muted"> {m("usedVia", { attributes: u.attributes.join(", ") })}</span>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </Pane>
  );
}
