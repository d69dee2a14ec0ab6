// A type's list: the view's options as they live in the address (sort, q,
// filter, deleted), the Delivery filter expression the builder writes, and
// the pages of rows, read on demand (Delivery skip/take, or the Index for a
// full-text search), cached and counted.
import type { ApiObject } from "../api/generated/delivery";
import type { ObjectFilterCondition, ObjectItem, ObjectSortBy } from "../api/generated/index";
import { api } from "../auth/session";
import { noteRefusal } from "./access";
import { searchCondition } from "./indexfilter";

export type DeletedMode = "live" | "deleted" | "all";

/** The sortable keys: the name, the id, the last change, or an attribute's ApiIdentifier. */
export const sortName = "displayName";
export const sortId = "meta.id";
export const sortModified = "meta.lastModified";

export interface Sort {
  key: string;
  desc: boolean;
}

export interface ListOptions {
  sort?: Sort | undefined;
  /** Full-text search (the Index), "" = none. */
  q: string;
  /** Delivery filter expression, "" = none. */
  filter: string;
  deleted: DeletedMode;
}

/** The longest search text and filter expression the studio sends. */
export const maxQuery = 500;

/** parseOptions reads the list's options from the address query (unknown values fall back). */
export function parseOptions(query: Record<string, string>): ListOptions {
  const s = query.sort ?? "";
  const d = query.deleted;
  return {
    sort: s ? { key: s.replace(/^-/, ""), desc: s.startsWith("-") } : undefined,
    q: (query.q ?? "").slice(0, maxQuery),
    filter: (query.filter ?? "").slice(0, maxQuery),
    deleted: d === "deleted" || d === "all" ? d : "live",
  };
}

/** optionsQuery is the address query of the options (defaults left out). */
export function optionsQuery(o: ListOptions): Record<string, string | undefined> {
  return {
    sort: o.sort ? (o.sort.desc ? "-" : "") + o.sort.key : undefined,
    q: o.q || undefined,
    filter: o.filter || undefined,
    deleted: o.deleted === "live" ? undefined : o.deleted,
  };
}

/** The operators of the Delivery filter syntax. */
export const operators = ["=", "!=", "<", ">", "<=", ">=", ":"] as const;
export type Operator = (typeof operators)[number];

export interface Condition {
  field: string;
  op: Operator;
  value: string;
}

/** quoteValue writes a value as the filter syntax reads it: bare when plain, else in double quotes. */
export function quoteValue(v: string): string {
  if (/^[A-Za-z0-9_.\-+:]+$/.test(v) && !v.includes("&&") && !v.includes("||")) return v;
  return `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** expression joins the complete conditions with && (incomplete ones are left out). */
export function expression(conds: readonly Condition[]): string {
  return conds
    .filter((c) => c.field.trim() !== "" && c.value !== "")
    .map((c) => `${c.field.trim()}${c.op}${quoteValue(c.value)}`)
    .join("&&");
}

/**
 * parseExpression reads an expression the builder wrote back into its
 * conditions; null when it is not one (the builder then shows it as text).
 */
export function parseExpression(expr: string): Condition[] | null {
  if (expr.trim() === "") return [];
  const out: Condition[] = [];
  let i = 0;
  const s = expr;
  while (i < s.length) {
    const m = /^\s*([A-Za-z_$][\w.$]*)\s*(!=|<=|>=|=|<|>|:)\s*/.exec(s.slice(i));
    if (!m) return null;
    i += m[0].length;
    let value = "";
    if (s[i] === '"') {
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === "\\" && i + 1 < s.length) i++;
        value += s[i++];
      }
      if (s[i] !== '"') return null;
      i++;
    } else {
      const end = s.indexOf("&&", i);
      value = (end < 0 ? s.slice(i) : s.slice(i, end)).trim();
      i = end < 0 ? s.length : end;
      if (value.includes("||")) return null;
    }
    out.push({ field: m[1] ?? "", op: (m[2] ?? "=") as Operator, value });
    const rest = /^\s*(&&)?\s*/.exec(s.slice(i));
    if (rest) i += rest[0].length;
    if (i < s.length && !rest?.[1]) return null;
  }
  return out;
}

/** deliveryParams are the Delivery list and count parameters of the options. */
export function deliveryParams(o: ListOptions): { filter?: string; deleted: boolean; sort?: string } {
  const parts = [o.filter.trim()].filter(Boolean);
  if (o.deleted === "deleted") parts.push("meta.deleted=true");
  const out: { filter?: string; deleted: boolean; sort?: string } = { deleted: o.deleted !== "live" };
  if (parts.length) out.filter = parts.join("&&");
  if (o.sort) out.sort = `${o.sort.key} ${o.sort.desc ? "desc" : "asc"}`;
  return out;
}

/** indexSort is the Index sort of a key; undefined when the Index cannot sort by it. */
export function indexSort(s: Sort | undefined): ObjectSortBy[] | undefined | null {
  if (!s) return undefined; // by score
  const kind = { [sortName]: 3, [sortId]: 1, [sortModified]: 4 }[s.key];
  return kind === undefined ? null : [{ sortBy: kind, reverse: s.desc }];
}

/** A row of the list. */
export interface Row {
  id: number;
  name: string;
  modified?: string | undefined;
  deleted: boolean;
  props: Record<string, unknown>;
}

export function rowOfDelivery(o: ApiObject): Row {
  return {
    id: o.meta?.id ?? 0,
    name: o.displayName || `#${o.meta?.id ?? "?"}`,
    modified: o.meta?.lastModified,
    deleted: !!o.meta?.deleted,
    props: o.props ?? {},
  };
}

export function rowOfIndex(o: ObjectItem): Row {
  return { id: o.id ?? 0, name: o.displayName || `#${o.id ?? "?"}`, modified: o.modified, deleted: !!o.deleted, props: {} };
}

/** columnsOf are the attribute columns a page shows: its props' keys but the name, at most max. */
export function columnsOf(rows: readonly Row[], max = 3): string[] {
  const seen: string[] = [];
  for (const r of rows)
    for (const k of Object.keys(r.props))
      if (k !== "attributeName" && !seen.includes(k) && isScalarColumn(r.props[k])) seen.push(k);
  return seen.sort().slice(0, max);
}

function isScalarColumn(v: unknown): boolean {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}

/** cellText is a prop's value as a list cell shows it. */
export function cellText(v: unknown, num: (n: number) => string): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "number") return num(v);
  if (typeof v === "boolean") return v ? "✓" : "–";
  if (typeof v === "string") return v.length > 120 ? v.slice(0, 119) + "…" : v;
  return "…";
}

export interface Source {
  branch: string;
  type: string;
  typeId: number;
  options: ListOptions;
  /** Read what this transaction wrote (after a delete or restore). */
  minVersion?: number | undefined;
  /** The studio's value language (201, 202): the Index's display names and language-dependent filter values. */
  language: number;
  /** The type's display-name attribute (5005), else the name (1000): what displayName means in a filter. */
  nameAttr: number;
}

export const pageSize = 100;

/** fetchPage reads page n of the list. */
export async function fetchPage(src: Source, n: number, signal?: AbortSignal): Promise<Row[]> {
  const o = src.options;
  if (o.q) {
    const sortBy = indexSort(o.sort);
    const { data } = await api.call("index", "ObjectSearch", { branch: src.branch }, {
      filter: await indexFilter(src),
      page: { skip: n * pageSize, take: pageSize },
      ...(sortBy ? { sortBy } : {}),
      ...waitFor(src.minVersion),
    }, { signal });
    return (data.objects ?? []).map(rowOfIndex);
  }
  const { data } = await api.call("delivery", "ListTyped", {
    branch: src.branch, type: src.type, skip: n * pageSize, take: pageSize, ...deliveryParams(o),
  }, undefined, { signal, minVersion: src.minVersion });
  return (data.objs ?? []).map(rowOfDelivery);
}

/** fetchCount counts the list's objects. */
export async function fetchCount(src: Source, signal?: AbortSignal): Promise<number> {
  if (src.options.q) {
    const { data } = await api.call("index", "ObjectCount", { branch: src.branch },
      { filter: await indexFilter(src), ...waitFor(src.minVersion) }, { signal });
    return data.count ?? 0;
  }
  const { filter, deleted } = deliveryParams(src.options);
  const { data } = await api.call("delivery", "CountTyped",
    { branch: src.branch, type: src.type, deleted, ...(filter ? { filter } : {}) }, undefined, { signal, minVersion: src.minVersion });
  return data.count ?? 0;
}

const conditions = new WeakMap<ListOptions, Map<string, Promise<ObjectFilterCondition>>>();

/**
 * indexFilter is the Index condition of a search (the full text and the
 * filter's conditions together, see indexfilter.ts), made once per options,
 * branch and language: the pages, the count and a live refresh of the same
 * list carry the same condition, and the filter's attributes are read once.
 */
export function indexFilter(src: Source): Promise<ObjectFilterCondition> {
  let held = conditions.get(src.options);
  if (!held) {
    held = new Map();
    conditions.set(src.options, held);
  }
  const key = [src.branch, src.typeId, src.language, src.nameAttr].join("\u0000");
  let p = held.get(key);
  if (!p) {
    const o = src.options;
    const base = { fullText: o.q, typeId: src.typeId, language: src.language, deleted: o.deleted === "all" ? undefined : o.deleted === "deleted" };
    p = searchCondition(src.branch, base, parseExpression(o.filter), o.filter, src.nameAttr);
    const all = held;
    p.catch(() => all.delete(key));
    held.set(key, p);
  }
  return p;
}

function waitFor(v: number | undefined) {
  return v ? { minChangeTrackingVersion: v, maxWaitTime: "00:00:05" } : {};
}

/** deleteObjects soft-deletes objects and returns the transaction id. */
export async function deleteObjects(branch: string, ids: readonly number[]): Promise<number> {
  try {
    const { data } = await api.call("management", "DeleteObjects", { branch }, { objectIds: ids.map(String) });
    return data.transaction?.id ?? 0;
  } catch (e) {
    noteRefusal(branch, e); // a 403: the grant was removed, the views of the branch turn read-only
    throw e;
  }
}

/** restoreObjects brings soft-deleted objects back (PATCH meta.deleted false) and returns the transaction id. */
export async function restoreObjects(branch: string, ids: readonly number[]): Promise<number> {
  try {
    const { data } = await api.call("management", "UpdateObjects", { branch },
      { objects: ids.map((id) => ({ meta: { id, deleted: false } })) });
    return data.transaction?.id ?? 0;
  } catch (e) {
    noteRefusal(branch, e);
    throw e;
  }
}

/**
 * PageCache holds the pages of one list (one source): each page is read
 * once, concurrent reads of a page share the request, and a failed page is
 * read again on the next ask.
 */
export class PageCache {
  private pages = new Map<number, Row[]>();
  private pending = new Map<number, Promise<Row[]>>();
  error: unknown = null;

  constructor(
    private readonly fetch: (n: number) => Promise<Row[]>,
    private readonly onChange: () => void,
  ) {}

  /** row is the row at index i, or undefined while its page loads (and asks for it). */
  row(i: number): Row | undefined {
    const n = Math.floor(i / pageSize);
    const p = this.pages.get(n);
    if (p) return p[i - n * pageSize];
    void this.load(n);
    return undefined;
  }

  has(n: number): boolean {
    return this.pages.has(n);
  }

  /** load reads page n unless it is held or on its way. */
  load(n: number): Promise<Row[]> {
    const held = this.pages.get(n);
    if (held) return Promise.resolve(held);
    let p = this.pending.get(n);
    if (!p) {
      p = this.fetch(n).then(
        (rows) => {
          this.pending.delete(n);
          this.pages.set(n, rows);
          this.error = null;
          this.onChange();
          return rows;
        },
        (e: unknown) => {
          this.pending.delete(n);
          if (!(e instanceof DOMException && e.name === "AbortError")) {
            this.error = e;
            this.onChange();
          }
          throw e;
        },
      );
      this.pending.set(n, p);
      p.catch(() => undefined);
    }
    return p;
  }

  /** ensure reads the pages rows first..last span, and the page after them (prefetch). */
  ensure(first: number, last: number, count: number) {
    const a = Math.floor(first / pageSize);
    const b = Math.floor(Math.max(first, last) / pageSize);
    for (let n = a; n <= b + 1 && n * pageSize < count; n++) void this.load(n).catch(() => undefined);
  }

  /** loaded are the rows held so far (for the columns). */
  loaded(): Row[] {
    return [...this.pages.values()].flat();
  }

  /**
   * refresh reads every held page again with read (a live change: the same
   * list at a newer version) and swaps each in when it answers: the rows
   * change in place, never blank while they load. A failed read keeps the
   * old rows.
   */
  async refresh(read: (n: number) => Promise<Row[]>): Promise<void> {
    await Promise.all([...this.pages.keys()].map(async (n) => {
      try {
        this.pages.set(n, await read(n));
      } catch {
        /* the old rows stay; the next change or view reads again */
      }
    }));
    this.onChange();
  }
}
