// The media library: drop files to upload them (several at once, each
// with its progress, Pause and Resume, going on after a lost connection),
// make binary proxy objects of them, and find the branch's files in a grid
// of thumbnails loaded as they scroll into view, by name and file type; a
// file's pane downloads it, replaces its content and lists where it is used.
// The address keeps the media type, the search and the open file
// (/studio/b/{branch}/media?type=…&q=…&ext=…&file=…).
import { useEffect, useState } from "preact/hooks";
import { fileTypes, loadMediaTypes, loadPage, maxSearch, type MediaItem } from "../../data/media";
import type { TypeInfo } from "../../data/types";
import { locale } from "../../i18n/i18n";
import { navigate, type Route, setQuery } from "../../router";
import { Shell, uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Pane, Problem, Skeleton } from "../../ui/ui";
import { MediaDetails } from "./MediaDetails";
import { m } from "./messages";
import { Thumb } from "./thumb";
import { addFiles, DropZone, Uploads, written } from "./uploads";
import "./media.css";

export function MediaView({ route: r }: { route: Route }) {
  const l = useStore(locale);
  const branch = r.branch ?? "";
  const [types, setTypes] = useState<TypeInfo[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!branch) return;
    const ac = new AbortController();
    setTypes(null);
    setError(null);
    loadMediaTypes(branch, uiLanguages(l), ac.signal).then(setTypes, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [branch, l]);
  const type = types?.find((t) => String(t.id) === r.query.type || t.apiIdentifier === r.query.type) ?? types?.[0];
  const open = (id: number | undefined) => setQuery({ file: id === undefined ? undefined : String(id) });
  const fileId = Number(r.query.file) || 0;

  return (
    <Shell>
      <Pane title={m("media")} class="media-pane"
        actions={types && types.length > 0 && (
          <label class="topbar-field">
            <span>{m("mediaType")}</span>
            <select class="input" value={type ? String(type.id) : ""} onChange={(e) => setQuery({ type: e.currentTarget.value, file: undefined, ext: undefined })}>
              {types.map((t) => <option key={t.id} value={String(t.id)}>{t.name}</option>)}
            </select>
          </label>
        )}>
        {error !== null && <Problem error={error} />}
        {!types && error === null && <Skeleton lines={6} />}
        {types && types.length === 0 && <p class="notice">{m("noTypes")}</p>}
        {types && (
          <>
            <DropZone onFiles={(files) => addFiles(files)} disabled={!type} />
            <Uploads branch={branch} type={type?.id ?? 0} language={uiLanguages(l)[0] ?? 201} onCreated={(id) => open(id)} />
          </>
        )}
        {type && <Library key={`${branch}/${type.id}`} branch={branch} type={type} route={r} onOpen={open} />}
      </Pane>
      {type && fileId > 0 && (
        <MediaDetails key={`${branch}/${fileId}`} branch={branch} id={fileId} onClose={() => open(undefined)}
          onOpenObject={(typeRef, id) => navigate({ branch, section: "content", type: String(typeRef), object: String(id), query: {} })} />
      )}
    </Shell>
  );
}

/** Library is the searchable grid of one media type's files. */
function Library(p: { branch: string; type: TypeInfo; route: Route; onOpen: (id: number) => void }) {
  const q = (p.route.query.q ?? "").slice(0, maxSearch);
  const ext = p.route.query.ext ?? "";
  const minVersion = useStore(written);
  const [typed, setTyped] = useState(q);
  const [exts, setExts] = useState<string[]>([]);
  const [items, setItems] = useState<MediaItem[] | null>(null);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const type = String(p.type.id);
  useEffect(() => {
    const ac = new AbortController();
    fileTypes(p.branch, type, ac.signal).then(setExts, () => setExts([]));
    return () => ac.abort();
  }, [p.branch, type, minVersion]);
  useEffect(() => {
    const ac = new AbortController();
    setError(null);
    loadPage(p.branch, type, q, ext, 0, minVersion || undefined, ac.signal).then((pg) => {
      setItems(pg.items);
      setMore(pg.more);
    }, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [p.branch, type, q, ext, minVersion]);
  // The search follows the typing after a pause (the address keeps it).
  useEffect(() => {
    if (typed === q) return;
    const t = setTimeout(() => setQuery({ q: typed.trim() || undefined }), 250);
    return () => clearTimeout(t);
  }, [typed]);
  const showMore = async () => {
    setLoadingMore(true);
    try {
      const pg = await loadPage(p.branch, type, q, ext, items?.length ?? 0, minVersion || undefined);
      setItems((cur) => [...(cur ?? []), ...pg.items.filter((x) => !cur?.some((c) => c.id === x.id))]);
      setMore(pg.more);
    } catch (e) {
      setError(e);
    } finally {
      setLoadingMore(false);
    }
  };
  const known = ext && !exts.includes(ext) ? [ext, ...exts] : exts;
  return (
    <section class="library" aria-label={p.type.name}>
      <div class="library-search">
        <input class="input" type="search" aria-label={m("search")} placeholder={m("search")} value={typed} maxLength={maxSearch}
          onInput={(e) => setTyped(e.currentTarget.value)} />
        <select class="input" aria-label={m("fileType")} value={ext} onChange={(e) => setQuery({ ext: e.currentTarget.value || undefined })}>
          <option value="">{m("allTypes")}</option>
          {known.map((x) => <option key={x} value={x}>{x}</option>)}
        </select>
      </div>
      {error !== null && <Problem error={error} />}
      {!items && error === null && <Skeleton lines={4} />}
      {items && items.length === 0 && <p class="muted">{q || ext ? m("none") : m("empty")}</p>}
      {items && items.length > 0 && (
        <ul class="media-grid">
          {items.map((it) => (
            <li key={it.id}>
              <button type="button" class={`media-card ${String(it.id) === p.route.query.file ? "active" : ""}`}
                aria-current={String(it.id) === p.route.query.file ? "true" : undefined}
                data-id={it.id} onClick={() => p.onOpen(it.id)}>
                <Thumb branch={p.branch} item={it} size={256} />
                <span class="media-name">{it.name || `#${it.id}`}</span>
                <span class="muted media-ext">{it.extension}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {more && <Button onClick={() => void showMore()} disabled={loadingMore}>{m("more")}</Button>}
    </section>
  );
}
