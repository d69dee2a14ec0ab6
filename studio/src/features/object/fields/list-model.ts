// The logic of a multi-valued attribute's rows: the list a stored value
// shows as, adding, removing and moving rows (by button or Alt+↑/↓), the
// stable keys that keep each row's input with its value while rows move,
// and which row an error of the API is about.
import { move } from "./reference-model";

export { move };

/** listOf is a value as the rows of a multi-valued attribute: a list, a lone scalar as one row, nothing as none. */
export function listOf(v: unknown): unknown[] {
  if (Array.isArray(v)) return [...v];
  return v === undefined || v === null ? [] : [v];
}

/** emptyRow reports a row that is not sent (the API stores no empty value). */
export function emptyRow(v: unknown): boolean {
  return v === undefined || v === null || v === "";
}

export function addRow(values: readonly unknown[]): unknown[] {
  return [...values, null];
}

export function removeRow(values: readonly unknown[], i: number): unknown[] {
  return values.filter((_, j) => j !== i);
}

/** moveKey is the step a key moves a row by (Alt+↑ −1, Alt+↓ +1), or 0. */
export function moveKey(e: { key: string; altKey: boolean; ctrlKey?: boolean; metaKey?: boolean }): number {
  if (!e.altKey || e.ctrlKey || e.metaKey) return 0;
  return e.key === "ArrowUp" ? -1 : e.key === "ArrowDown" ? 1 : 0;
}

/**
 * RowKeys keeps one key per row so that a row's input (and what it holds,
 * such as a number being typed) moves with its value. Every change of the
 * list goes through the same operation on the keys; a list changed from
 * outside (a reload, another length) gets new keys.
 */
export class RowKeys {
  private keys: number[] = [];
  private next = 0;

  of(n: number): readonly number[] {
    if (this.keys.length !== n) this.keys = Array.from({ length: n }, () => this.next++);
    return this.keys;
  }

  add(): void {
    this.keys = [...this.keys, this.next++];
  }

  remove(i: number): void {
    this.keys = removeRow(this.keys, i) as number[];
  }

  move(from: number, to: number): void {
    this.keys = move(this.keys, from, to);
  }
}

/**
 * sentPosition maps the sortReverse of a sent row (patchRows sends the
 * rows that are not empty, numbered 0, 1, 2 …) to the editor's row.
 */
export function rowOfSent(values: readonly unknown[], sortReverse: number): number | undefined {
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    if (emptyRow(values[i])) continue;
    if (k === sortReverse) return i;
    k++;
  }
  return undefined;
}

/**
 * rowOfProblem is the row a 400 about a multi-valued attribute concerns:
 * the row its member sortReverse names (the position the API validated),
 * else the one row whose value its detail quotes ("value 12 is not …",
 * "referenced object 12 does not exist"); undefined when it names none
 * (then the message belongs to the whole list).
 */
export function rowOfProblem(p: { detail?: string; [k: string]: unknown } | undefined, values: readonly unknown[]): number | undefined {
  if (!p) return undefined;
  const sr = p.sortReverse;
  if (typeof sr === "number" && Number.isInteger(sr)) return rowOfSent(values, sr);
  const d = typeof p.detail === "string" ? p.detail : "";
  const quoted = /\bvalue (.+?) (?:is not|must be)\b/.exec(d)?.[1];
  const object = /\bobject (\d+) (?:does not exist|has type)\b/.exec(d)?.[1];
  const matches = (v: unknown) =>
    (quoted !== undefined && JSON.stringify(v) === quoted) || (object !== undefined && String(v) === object);
  const hits = values.map((v, i) => (matches(v) ? i : -1)).filter((i) => i >= 0);
  return hits.length === 1 ? hits[0] : undefined;
}
