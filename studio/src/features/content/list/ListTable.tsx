// The virtual table: a sticky header whose buttons sort, and only the rows
// in view (plus a few) rendered over the full count; the pages under them
// are read on demand and the next one ahead. Arrow keys move between rows,
// Enter opens one, Space selects it. A row's controls (its name opens it,
// Delete or Restore at its end) are buttons named after the row. A reader
// (no write grant) gets neither the selection column nor the actions: there
// is nothing to select for.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { cellText, type PageCache, type Row, type Sort, sortId, sortModified, sortName } from "../../../data/list";
import { locale } from "../../../i18n/i18n";
import { m } from "./messages";

export const rowHeight = 36;
const overscan = 8;

export interface Column {
  key: string;
  label: string;
  /** What the label stands for when it is a name (an attribute's ApiIdentifier). */
  hint?: string | undefined;
  sortable: boolean;
  cell: (r: Row) => string;
}

// One number and one date format per language: an Intl constructor per
// cell costs milliseconds, and the first screen has dozens of cells.
let fmtLocale = "";
let numFmt = new Intl.NumberFormat("en");
let dateFmt = new Intl.DateTimeFormat("en");
function formats() {
  const l = locale.get();
  if (l !== fmtLocale) {
    fmtLocale = l;
    numFmt = new Intl.NumberFormat(l);
    dateFmt = new Intl.DateTimeFormat(l, { dateStyle: "medium", timeStyle: "short" });
  }
  return { num: (n: number) => numFmt.format(n), date: (iso: string) => {
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? iso : dateFmt.format(d);
  } };
}

/** columns are the list's columns; attribute columns are headed by their names (labels, by ApiIdentifier). */
export function columns(attrs: readonly string[], searching: boolean, labels: Readonly<Record<string, string>> = {}): Column[] {
  const f = formats();
  return [
    { key: sortName, label: m("name"), sortable: true, cell: (r) => r.name },
    ...attrs.map((a) => {
      const label = labels[a] ?? a;
      return { key: a, label, hint: label === a ? undefined : a, sortable: !searching, cell: (r: Row) => cellText(r.props[a], f.num) };
    }),
    { key: sortId, label: m("id"), sortable: true, cell: (r) => String(r.id) },
    { key: sortModified, label: m("modified"), sortable: true, cell: (r) => (r.modified ? f.date(r.modified) : "") },
  ];
}

export function ListTable(props: {
  label: string;
  cache: PageCache;
  count: number;
  cols: Column[];
  sort: Sort | undefined;
  /** The default order when no sort is chosen (the id, or the score of a search). */
  defaultSortKey: string | undefined;
  onSort: (s: Sort) => void;
  selected: ReadonlySet<number>;
  onSelect: (r: Row, on: boolean) => void;
  onOpen: (r: Row) => void;
  /** Delete (a live row) or restore (a deleted one): asks first. */
  onDelete: (r: Row) => void;
  onRestore: (r: Row) => void;
  /** No write grant on the branch: no selection, no Delete or Restore at the rows. */
  readOnly?: boolean;
}) {
  const { cache, count, cols } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  const [active, setActive] = useState(0);
  const focusActive = useRef(false);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setView({ top: el.scrollTop, height: el.clientHeight });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const last = Math.min(count - 1, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  useEffect(() => {
    if (count > 0) cache.ensure(first, last, count);
  }, [cache, first, last, count]);
  useEffect(() => {
    if (active >= count) setActive(Math.max(0, count - 1));
  }, [count]);
  useEffect(() => {
    if (!focusActive.current) return;
    focusActive.current = false;
    scroller.current?.querySelector<HTMLElement>(`tr[data-index="${active}"]`)?.focus();
  });

  const move = (to: number) => {
    const i = Math.max(0, Math.min(count - 1, to));
    const el = scroller.current;
    if (el) {
      const head = rowHeight;
      const y = i * rowHeight;
      if (y < el.scrollTop) el.scrollTop = y;
      else if (y + rowHeight > el.scrollTop + el.clientHeight - head) el.scrollTop = y + rowHeight + head - el.clientHeight;
      setView({ top: el.scrollTop, height: el.clientHeight });
    }
    focusActive.current = true;
    setActive(i);
  };
  const onKey = (e: KeyboardEvent, i: number, r: Row | undefined) => {
    const page = Math.max(1, Math.floor(view.height / rowHeight) - 2);
    const to = { ArrowDown: i + 1, ArrowUp: i - 1, PageDown: i + page, PageUp: i - page, Home: 0, End: count - 1 }[e.key];
    if (to !== undefined) {
      e.preventDefault();
      move(to);
    } else if (e.key === "Enter" && r) {
      e.preventDefault();
      props.onOpen(r);
    } else if (e.key === " " && r && !props.readOnly) {
      e.preventDefault();
      props.onSelect(r, !props.selected.has(r.id));
    }
  };

  const rows = [];
  for (let i = first; i <= last; i++) {
    const r = cache.row(i);
    const sel = r && !props.readOnly ? props.selected.has(r.id) : false;
    rows.push(
      <tr key={i} data-index={i} aria-rowindex={i + 2} tabIndex={i === active ? 0 : -1}
        class={`list-row ${r ? "" : "is-loading"} ${sel ? "is-selected" : ""} ${r?.deleted ? "is-deleted" : ""}`}
        aria-selected={r && !props.readOnly ? sel : undefined}
        onFocus={() => setActive(i)} onKeyDown={(e) => onKey(e, i, r)}>
        {!props.readOnly && (
          <td class="col-check">
            {r && <input type="checkbox" tabIndex={-1} checked={sel} aria-label={m("select", { name: r.name })}
              onChange={(e) => props.onSelect(r, e.currentTarget.checked)} />}
          </td>
        )}
        {cols.map((c, ci) => (
          <td key={c.key} class={`col-${ci === 0 ? "name" : c.key === sortId ? "id" : "attr"}`}>
            {!r ? <span class="cell-skeleton" /> : ci === 0 ? (
              <>
                <button type="button" class="row-open" tabIndex={-1} aria-label={m("openNamed", { name: r.name })}
                  onClick={() => props.onOpen(r)}>{c.cell(r)}</button>
                {r.deleted && <span class="badge badge-deleted">{m("deletedBadge")}</span>}
              </>
            ) : c.cell(r)}
          </td>
        ))}
        {!props.readOnly && <td class="col-actions">
          {r && (r.deleted ? (
            <button type="button" class="btn btn-ghost btn-icon" tabIndex={-1} aria-label={m("restoreNamed", { name: r.name })}
              title={m("restoreNamed", { name: r.name })} onClick={() => props.onRestore(r)}>
              <Icon d="M4 10a8 8 0 1 1 2.3 5.7M4 4v6h6" />
            </button>
          ) : (
            <button type="button" class="btn btn-ghost btn-icon btn-danger" tabIndex={-1} aria-label={m("deleteNamed", { name: r.name })}
              title={m("deleteNamed", { name: r.name })} onClick={() => props.onDelete(r)}>
              <Icon d="M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3" />
            </button>
          ))}
        </td>}
      </tr>,
    );
  }
  const sortOf = (key: string): "ascending" | "descending" | "none" => {
    if (props.sort?.key === key) return props.sort.desc ? "descending" : "ascending";
    return !props.sort && props.defaultSortKey === key ? "ascending" : "none";
  };
  return (
    <div class="list-scroll" ref={scroller} onScroll={(e) => setView({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}>
      <table class="list-table" aria-label={props.label} aria-rowcount={count + 1}>
        <thead>
          <tr aria-rowindex={1}>
            {!props.readOnly && <th class="col-check" scope="col"><span class="visually-hidden">{m("selectAll")}</span></th>}
            {cols.map((c) => {
              const s = sortOf(c.key);
              return (
                <th key={c.key} scope="col" aria-sort={s}>
                  {c.sortable ? (
                    <button type="button" class="sort-btn" aria-label={c.label} title={c.hint} onClick={() => props.onSort({ key: c.key, desc: s === "ascending" })}>
                      {c.label}
                      <span class="sort-mark" aria-hidden="true">{s === "ascending" ? "▲" : s === "descending" ? "▼" : ""}</span>
                    </button>
                  ) : <span class="sort-btn" title={c.hint}>{c.label}</span>}
                </th>
              );
            })}
            {!props.readOnly && <th class="col-actions" scope="col"><span class="visually-hidden">{m("actions")}</span></th>}
          </tr>
        </thead>
        <tbody>
          {first > 0 && <tr aria-hidden="true" class="list-spacer" style={{ height: `${first * rowHeight}px` }} />}
          {rows}
          {last < count - 1 && <tr aria-hidden="true" class="list-spacer" style={{ height: `${(count - 1 - last) * rowHeight}px` }} />}
        </tbody>
      </table>
    </div>
  );
}

/** SkeletonTable is the list while its count loads. */
export function SkeletonTable(props: { cols: number }) {
  return (
    <div class="list-scroll" aria-busy="true" aria-label={m("loading")} role="status">
      <table class="list-table" aria-hidden="true">
        <tbody>
          {Array.from({ length: 12 }, (_, i) => (
            <tr key={i} class="list-row is-loading">
              {Array.from({ length: props.cols + 2 }, (_, j) => <td key={j}><span class="cell-skeleton" /></td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Icon is a stroked 24×24 SVG path (decorative: the button carries the name). */
function Icon(props: { d: string }) {
  return (
    <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"
      stroke-linejoin="round" aria-hidden="true" focusable="false">
      <path d={props.d} />
    </svg>
  );
}
