// The object editor's logic: values by (attribute, language, variant), the
// editor's edits and the PATCH they become, drafts kept in local storage,
// the fields of a conflict, and the API's validation errors at their field.
import type { CmsObject, CmsValue } from "../api/generated/management";

/** keyOf names one value group: attribute, language, variant. */
export function keyOf(attr: number, lang: number, variant: number): string {
  return `${attr}:${lang}:${variant}`;
}

export function parseKey(k: string): { attr: number; lang: number; variant: number } {
  const [a, l, v] = k.split(":").map(Number);
  return { attr: a ?? 0, lang: l ?? 0, variant: v ?? 0 };
}

/** rowsByKey groups an object's rows by key, each group in sortReverse order. */
export function rowsByKey(o: CmsObject | null | undefined): Map<string, CmsValue[]> {
  const out = new Map<string, CmsValue[]>();
  for (const v of o?.values ?? []) {
    const k = keyOf(v.attribute ?? 0, v.language ?? 0, v.variant ?? 0);
    const g = out.get(k);
    if (g) g.push(v);
    else out.set(k, [v]);
  }
  for (const g of out.values()) g.sort((a, b) => (a.sortReverse ?? 0) - (b.sortReverse ?? 0));
  return out;
}

/** valueOf is a group's value: the scalar of a single-valued attribute, the list of a multi-valued one; undefined when unset. */
export function valueOf(rows: Map<string, CmsValue[]>, k: string, multiple: boolean): unknown {
  const g = rows.get(k);
  if (!g || g.length === 0) return undefined;
  return multiple ? g.map((r) => r.value) : g[0]?.value;
}

/**
 * Edit is one change of the editor: set a value here (undefined or null =
 * no value, which on a child branch hides the inherited one), or remove
 * this branch's value so the inherited one shows again.
 */
export type Edit = { kind: "set"; value: unknown } | { kind: "inherit" };
export type Edits = Record<string, Edit>;

/** A value row of a write; inherit: true is "back to inherited". */
export type WriteRow = CmsValue;

/** patchRows turns edits into the values of an UpdateObjects request. */
export function patchRows(edits: Edits, multiple: (attr: number) => boolean): WriteRow[] {
  const rows: WriteRow[] = [];
  for (const k of Object.keys(edits).sort()) {
    const e = edits[k]!;
    const { attr, lang, variant } = parseKey(k);
    const base = { attribute: attr, language: lang, variant };
    if (e.kind === "inherit") {
      rows.push({ ...base, value: null, inherit: true });
      continue;
    }
    if (multiple(attr)) {
      const list = Array.isArray(e.value) ? e.value.filter((x) => !isEmpty(x)) : isEmpty(e.value) ? [] : [e.value];
      if (list.length === 0) rows.push({ ...base, value: null });
      list.forEach((x, i) => rows.push({ ...base, value: x, sortReverse: i }));
    } else {
      rows.push({ ...base, value: isEmpty(e.value) ? null : e.value });
    }
  }
  return rows;
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === "";
}

/** sameValue compares two values as the API would store them ("" = none). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    const x = Array.isArray(a) ? a : isEmpty(a) ? [] : [a];
    const y = Array.isArray(b) ? b : isEmpty(b) ? [] : [b];
    return x.length === y.length && x.every((v, i) => sameValue(v, y[i]));
  }
  return a === b;
}

// Drafts: the edits not yet saved, per (branch, object), in local storage
// (content, no credentials), so a reload or a lost connection loses nothing.

export interface Draft {
  /** When the draft was last changed (ISO). */
  savedAt: string;
  /** The ETag the edits were made on. */
  etag: string | null;
  edits: Edits;
}

export interface KeyValueStorage {
  getItem(k: string): string | null;
  setItem(k: string, v: string): void;
  removeItem(k: string): void;
}

/** A draft larger than this is not kept (local storage holds a few MB per origin). */
export const maxDraftBytes = 1 << 20;

export function draftKey(branch: string, id: string): string {
  return `cms.studio.draft.${branch}.${id}`;
}

export function loadDraft(s: KeyValueStorage, branch: string, id: string): Draft | null {
  try {
    const raw = s.getItem(draftKey(branch, id));
    if (!raw) return null;
    const d = JSON.parse(raw) as Draft;
    if (!d || typeof d !== "object" || !d.edits || typeof d.edits !== "object" || Object.keys(d.edits).length === 0) return null;
    return d;
  } catch {
    return null;
  }
}

/** saveDraft keeps d (an empty one is removed); false when storage refused it. */
export function saveDraft(s: KeyValueStorage, branch: string, id: string, d: Draft): boolean {
  try {
    if (Object.keys(d.edits).length === 0) {
      s.removeItem(draftKey(branch, id));
      return true;
    }
    const raw = JSON.stringify(d);
    if (raw.length > maxDraftBytes) return false;
    s.setItem(draftKey(branch, id), raw);
    return true;
  } catch {
    return false;
  }
}

export function clearDraft(s: KeyValueStorage, branch: string, id: string) {
  try {
    s.removeItem(draftKey(branch, id));
  } catch {
    /* nothing kept */
  }
}

// Conflicts: a save answered 412 — someone else wrote the object since it
// was read. Each edited field is shown with the other writer's value.

export interface ConflictField {
  key: string;
  /** The editor's edit. */
  yours: Edit;
  /** The value stored here when the editor read the object. */
  base: unknown;
  /** The value stored here now (the other writer's). */
  theirs: unknown;
  /** Whether the other writer changed this field. */
  changed: boolean;
}

/** conflictFields lists every edited field with base and current local values. */
export function conflictFields(edits: Edits, base: CmsObject | null, current: CmsObject | null, multiple: (attr: number) => boolean): ConflictField[] {
  const b = rowsByKey(base);
  const c = rowsByKey(current);
  return Object.keys(edits)
    .sort()
    .map((key) => {
      const multi = multiple(parseKey(key).attr);
      const was = valueOf(b, key, multi);
      const now = valueOf(c, key, multi);
      return { key, yours: edits[key]!, base: was, theirs: now, changed: !sameValue(was, now) || b.has(key) !== c.has(key) };
    });
}

/** resolveConflict keeps the edits chosen "yours"; "theirs" drops the edit (the stored value stays). */
export function resolveConflict(edits: Edits, choice: Record<string, "yours" | "theirs">): Edits {
  const out: Edits = {};
  for (const [k, e] of Object.entries(edits)) if ((choice[k] ?? "yours") === "yours") out[k] = e;
  return out;
}

// Validation errors at their field.

/** FieldRef names the field a ProblemDetails is about. */
export interface FieldRef {
  attr: number;
  lang?: number | undefined;
  variant?: number | undefined;
}

/**
 * problemField finds the field of a 400/422 ProblemDetails: its members
 * attribute, language and variant when the API sends them, else the
 * "attribute N" (and "language N") its detail names.
 */
export function problemField(p: { detail?: string; [k: string]: unknown } | undefined): FieldRef | null {
  if (!p) return null;
  const num = (x: unknown) => (typeof x === "number" && Number.isInteger(x) ? x : undefined);
  const a = num(p.attribute);
  if (a !== undefined) return { attr: a, lang: num(p.language), variant: num(p.variant) };
  const d = typeof p.detail === "string" ? p.detail : "";
  const m = /\battribute (\d+)\b/.exec(d);
  if (!m) return null;
  const l = /\blanguage (\d+)\b/.exec(d);
  return { attr: Number(m[1]), lang: l ? Number(l[1]) : undefined };
}

/** fieldMessage is a value's error as the field shows it: without the "invalid request: attribute N (Type): " its field already says. */
export function fieldMessage(detail: string): string {
  const t = detail.replace(/^invalid request:\s*/, "").replace(/^attribute \d+(\s*\([^)]*\))?:\s*/, "");
  return t ? t.charAt(0).toUpperCase() + t.slice(1) : detail;
}
