// A type's list: search, the deleted filter, the filter builder, the count,
// the virtual table, and Delete / Restore of the selected rows. Every option
// lives in the address (sort, q, filter, deleted).
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError } from "../../../api/client";
import {
  columnsOf, type DeletedMode, deleteObjects, fetchCount, fetchPage, type ListOptions, maxQuery, optionsQuery, PageCache,
  parseOptions, restoreObjects, type Row, type Source, sortId, sortModified, sortName,
} from "../../../data/list";
import { IndexFilterError } from "../../../data/indexfilter";
import { columnLabels } from "../../../data/listattrs";
import { A } from "../../../data/model";
import type { TypeInfo } from "../../../data/types";
import { value } from "../../../data/values";
import { formatNumber, locale } from "../../../i18n/i18n";
import { navigate, type Route, setQuery } from "../../../router";
import { useBranchAccess } from "../../../live/access";
import { useLiveType } from "../../../live/hooks";
import { uiLanguages } from "../../../shell/Shell";
import { useStore } from "../../../store";
import { Button, Dialog, Pane, problemText, toast } from "../../../ui/ui";
import { ReadOnlyNotice } from "../../object/ReadOnlyNotice";
import { ExportDialog } from "./ExportDialog";
import { FilterBuilder } from "./FilterBuilder";
import { columns, ListTable, SkeletonTable } from "./ListTable";
import "./list.css";
import { m } from "./messages";

export function ContentList(props: { route: Route; type: TypeInfo }) {
  const r = props.route;
  const branch = r.branch ?? "";
  const typeKey = r.type ?? String(props.type.id);
  const opts = parseOptions(r.query);
  const optKey = JSON.stringify(opts);
  const [minVersion, setMinVersion] = useState<number | undefined>(undefined);
  const [, rerender] = useState(0);
  const [count, setCount] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [selected, setSelected] = useState<Map<number, Row>>(new Map());
  /** The rows a Delete or Restore asks about: the selected ones (toolbar) or one (its row's button). */
  const [confirm, setConfirm] = useState<{ what: "delete" | "restore"; rows: Row[] } | null>(null);
  const [busy, setBusy] = useState(false);
  /** The rows an export asks about (the selection), while its dialog is open. */
  const [exporting, setExporting] = useState<Row[] | null>(null);
  const [showFilter, setShowFilter] = useState(opts.filter !== "");
  const [attrs, setAttrs] = useState<string[]>([]);
  const [labels, setLabels] = useState<Record<string, string>>({});
  const l = useStore(locale);
  // A reader (no write grant) is told so, and offered no selection, Delete or
  // Restore; kept current while the list is open (a grant removed meanwhile).
  const access = useBranchAccess(branch);
  const readOnly = access.kind === "read";

  const language = uiLanguages(l)[0] ?? 201;
  const dn = value(props.type.object, A.displayName, 0);
  const nameAttr = typeof dn === "number" && dn > 0 ? dn : A.name;
  const src: Source = useMemo(() => ({ branch, type: typeKey, typeId: props.type.id, options: opts, minVersion, language, nameAttr }),
    [branch, typeKey, props.type.id, optKey, minVersion, language, nameAttr]);
  const ac = useRef<AbortController | null>(null);
  const cache = useMemo(() => {
    ac.current?.abort();
    const c = new AbortController();
    ac.current = c;
    const pc: PageCache = new PageCache((n) => fetchPage(src, n, c.signal), () => {
      if (c.signal.aborted) return;
      if (pc.error) setError(pc.error);
      if (!src.options.q) setAttrs((prev) => (prev.length ? prev : columnsOf(pc.loaded())));
      rerender((x) => x + 1);
    });
    return pc;
  }, [src]);
  useEffect(() => () => ac.current?.abort(), []);
  // A layout effect, not an effect: the requests leave right after the
  // render instead of after the next frame.
  useLayoutEffect(() => {
    setCount(null);
    setError(null);
    const signal = ac.current?.signal;
    // The first page goes out with the count: the first screen is one round trip.
    void cache.load(0).catch(() => undefined);
    fetchCount(src, signal).then((n) => !signal?.aborted && setCount(n), (e) => !signal?.aborted && setError(e));
  }, [cache]);
  useEffect(() => {
    setAttrs([]);
  }, [branch, typeKey]);
  // The columns' headers: the attributes' names in the studio's language
  // (with fallback), one request once the first page named the columns;
  // until it answers (or if it fails) the ApiIdentifiers stand.
  const attrsKey = attrs.join(",");
  useEffect(() => {
    if (attrs.length === 0) return undefined;
    const labelsAc = new AbortController();
    columnLabels(branch, attrs, uiLanguages(l), labelsAc.signal).then((x) => !labelsAc.signal.aborted && setLabels(x), () => undefined);
    return () => labelsAc.abort();
  }, [branch, attrsKey, l]);
  // Others' changes of the type's objects: the held pages and the count are
  // read again at the change's version and swapped in place (this tab's own
  // writes already read with minVersion; a reset reads the current state).
  useLiveType(branch, props.type.id, (c) => {
    if (c.own) return;
    const at: Source = { ...src, minVersion: c.kind === "reset" ? undefined : c.version };
    const signal = ac.current?.signal;
    void cache.refresh((n) => fetchPage(at, n, signal));
    fetchCount(at, signal).then((n) => !signal?.aborted && setCount(n), () => undefined);
  });
  // Another view of the list: what was selected may not be in it.
  useEffect(() => setSelected(new Map()), [branch, typeKey, optKey, readOnly]);
  // The grant removed while a Delete or Restore asks: the question goes
  // with the buttons (its answer would be refused), and the notice says why.
  useEffect(() => {
    if (readOnly) setConfirm(null);
  }, [readOnly]);

  const set = (o: Partial<ListOptions>) => {
    setMinVersion(undefined);
    setQuery(optionsQuery({ ...opts, ...o }));
  };
  const open = (row: Row) => navigate({ branch: r.branch, section: "content", type: r.type, object: String(row.id), query: r.query });
  const select = (row: Row, on: boolean) => {
    const next = new Map(selected);
    if (on) next.set(row.id, row);
    else next.delete(row.id);
    setSelected(next);
  };
  const sel = [...selected.values()];
  const live = sel.filter((x) => !x.deleted);
  const gone = sel.filter((x) => x.deleted);

  const act = async (what: "delete" | "restore", rows: Row[]) => {
    setBusy(true);
    try {
      const ids = rows.map((x) => x.id);
      const tx = what === "delete" ? await deleteObjects(branch, ids) : await restoreObjects(branch, ids);
      toast(m(what === "delete" ? "deleted" : "restored", { n: formatNumber(ids.length) }));
      setSelected((prev) => {
        const next = new Map(prev);
        for (const x of rows) next.delete(x.id);
        return next;
      });
      setConfirm(null);
      setMinVersion(tx || undefined);
    } catch (e) {
      toast(forbidden(e) ? m("forbidden") : problemText(e), "error");
    } finally {
      setBusy(false);
    }
  };

  const searching = opts.q !== "";
  const cols = columns(searching ? [] : attrs, searching, labels);
  const filterError = opts.filter !== "" && isFilterError(error, searching) ? error : null;
  const listError = error && !filterError ? error : null;
  const fields = [sortName, "attributeName", ...attrs, sortId, sortModified, "meta.guid", "meta.apiIdentifier"];
  // The first page may come before the count: show its rows already.
  const shown = count ?? (cache.has(0) && cache.loaded().length > 0 ? cache.loaded().length : null);
  const nFilter = opts.filter ? opts.filter.split("&&").length : 0;

  const title = (
    <span class="list-title">
      {props.type.name}
      <span class="list-count" aria-live="polite">
        {count === null ? (error ? "" : m("counting")) : count === 1 ? m("countOne") : m("count", { n: formatNumber(count) })}
      </span>
    </span>
  );
  const actions = (
    <>
      {sel.length > 0 && <span class="muted">{m("selected", { n: formatNumber(sel.length) })}</span>}
      {!readOnly && gone.length > 0 && <Button onClick={() => setConfirm({ what: "restore", rows: gone })}>{m("restore")}</Button>}
      {!readOnly && sel.length > 0 && <Button onClick={() => setExporting(sel)}>{m("export")}</Button>}
      {!readOnly && live.length > 0 && <Button variant="danger" onClick={() => setConfirm({ what: "delete", rows: live })}>{m("delete")}</Button>}
    </>
  );
  return (
    <Pane title={title} actions={actions} class="pane-list" label={m("list", { type: props.type.name })}>
      {access.kind === "read" && <ReadOnlyNotice revoked={access.revoked}>{m(access.revoked ? "revoked" : "readOnly")}</ReadOnlyNotice>}
      <div class="list-toolbar">
        <SearchBox value={opts.q} onSearch={(q) => set({ q })} />
        <label class="toolbar-field">
          <span>{m("deletedFilter")}</span>
          <select class="input" value={opts.deleted} aria-label={m("deletedFilter")}
            onChange={(e) => set({ deleted: e.currentTarget.value as DeletedMode })}>
            <option value="live">{m("live")}</option>
            <option value="deleted">{m("deletedOnly")}</option>
            <option value="all">{m("all")}</option>
          </select>
        </label>
        <Button aria-expanded={showFilter} aria-controls="filter-builder" class={nFilter ? "is-on" : ""}
          onClick={() => setShowFilter(!showFilter)}>
          {nFilter ? m("filterOn", { n: nFilter }) : m("filter")}
        </Button>
      </div>
      {showFilter && (
        <div id="filter-builder">
          <FilterBuilder filter={opts.filter} fields={fields} labels={labels}
            error={filterError instanceof IndexFilterError ? new Error(m(`index_${filterError.reason}`, { field: filterError.field })) : filterError}
            onApply={(filter) => set({ filter })} />
        </div>
      )}
      {listError ? <ListProblem error={listError} />
        : filterError ? null
        : shown === null ? <SkeletonTable cols={cols.length} />
        : shown === 0 ? <Empty opts={opts} onReset={() => set({ q: "", filter: "", deleted: "live" })} />
        : <ListTable label={m("list", { type: props.type.name })} cache={cache} count={shown} cols={cols} sort={opts.sort}
            defaultSortKey={searching ? undefined : sortId} onSort={(sort) => set({ sort })}
            selected={new Set(selected.keys())} onSelect={select} onOpen={open}
            onDelete={(row) => setConfirm({ what: "delete", rows: [row] })} onRestore={(row) => setConfirm({ what: "restore", rows: [row] })} readOnly={readOnly} />}
      {exporting && (
        <ExportDialog branch={branch} ids={exporting.map((x) => x.id)} name={exporting[0]?.name} onClose={() => setExporting(null)} />
      )}
      {confirm && !readOnly && (
        <Dialog title={confirmTitle(confirm.what, confirm.rows)} onClose={() => setConfirm(null)}
          footer={<>
            <Button onClick={() => setConfirm(null)}>{m("cancel")}</Button>
            <Button variant={confirm.what === "delete" ? "danger" : "primary"} disabled={busy} onClick={() => void act(confirm.what, confirm.rows)}>
              {m(confirm.what)}
            </Button>
          </>}>
          <p>{m(confirm.what === "delete" ? "deleteText" : "restoreText")}</p>
        </Dialog>
      )}
    </Pane>
  );
}

function confirmTitle(what: "delete" | "restore", rows: Row[]): string {
  const one = rows.length === 1 ? rows[0] : undefined;
  if (what === "delete") return one ? m("confirmDeleteOne", { name: one.name }) : m("confirmDelete", { n: formatNumber(rows.length) });
  return one ? m("confirmRestoreOne", { name: one.name }) : m("confirmRestore", { n: formatNumber(rows.length) });
}

/**
 * isFilterError: an error the builder shows: Delivery's 400 about the
 * filter, or, while searching, a condition the Index cannot take or the
 * Index's 400 about the value filters (not one about the full text).
 */
function isFilterError(e: unknown, searching: boolean): boolean {
  if (e instanceof IndexFilterError) return true;
  if (!(e instanceof ApiError) || e.status !== 400) return false;
  return !searching || (e.problem.detail ?? "").includes("filter.filters");
}

function forbidden(e: unknown): boolean {
  return e instanceof ApiError && e.status === 403;
}

function ListProblem(props: { error: unknown }) {
  return (
    <div class="problem" role="alert">
      {forbidden(props.error) ? `${m("forbidden")} ${problemText(props.error)}` : problemText(props.error)}
    </div>
  );
}

function Empty(props: { opts: ListOptions; onReset: () => void }) {
  const o = props.opts;
  const narrowed = o.q !== "" || o.filter !== "";
  return (
    <div class="list-empty">
      <p>{narrowed ? m("noMatch") : o.deleted === "deleted" ? m("emptyDeleted") : m("empty")}</p>
      {(narrowed || o.deleted !== "live") && <Button onClick={props.onReset}>{m("resetView")}</Button>}
    </div>
  );
}

/** SearchBox searches as one types (after a pause); / focuses it from anywhere. */
function SearchBox(props: { value: string; onSearch: (q: string) => void }) {
  const [text, setText] = useState(props.value);
  const input = useRef<HTMLInputElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => setText(props.value), [props.value]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
      if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
      e.preventDefault();
      input.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  const commit = (q: string) => {
    clearTimeout(timer.current);
    if (q.trim() !== props.value) props.onSearch(q.trim());
  };
  return (
    <form role="search" class="list-search" onSubmit={(e) => { e.preventDefault(); commit(text); }}>
      <input ref={input} type="search" class="input" aria-label={m("search")} placeholder={m("searchHint")} value={text}
        maxLength={maxQuery}
        onInput={(e) => {
          const q = e.currentTarget.value;
          setText(q);
          clearTimeout(timer.current);
          timer.current = setTimeout(() => commit(q), 300);
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape" && text) {
            e.preventDefault();
            setText("");
            commit("");
          }
        }} />
    </form>
  );
}
