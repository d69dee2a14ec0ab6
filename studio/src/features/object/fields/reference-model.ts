// The reference input's logic (ObjRef and BinRef values): reading a value
// as an object id, the Index search of the picker, the keyboard of its
// result list, reordering a list of references, the body of "Create new".
import type { CmsObject } from "../../../api/generated/management";
import type { ObjectSearchInput } from "../../../api/generated/index";
import { attr } from "../../../data/values";

/** isReference: the data types whose values are object ids (BinRef: binary proxy objects). */
export function isReference(dataType: string): boolean {
  return dataType === "ObjRef" || dataType === "BinRef" || dataType.startsWith("BinRef.");
}

export function isBinary(dataType: string): boolean {
  return dataType === "BinRef" || dataType.startsWith("BinRef.");
}

/** refId reads a value as an object id: a positive integer (a number, or digits as text). */
export function refId(v: unknown): number | undefined {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The picker's limits: words of a search, characters of a word, results shown. */
export const maxWords = 8;
export const maxWordLength = 64;
export const pageSize = 30;

/**
 * searchQuery turns what the editor typed into the Lucene query of the
 * full text: every word (letters and digits, as the index splits them) as
 * a prefix, all required. undefined when nothing is left.
 */
export function searchQuery(text: string): string | undefined {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, maxWords).map((w) => w.slice(0, maxWordLength));
  return words.length ? words.map((w) => `${w}*`).join(" ") : undefined;
}

/**
 * searchBody is the ObjectSearch request of the picker: the objects of the
 * attribute's target types (all types when it names none), not deleted,
 * matching the words (or the id "#12"), best first; the latest changed
 * first when nothing is typed.
 */
export function searchBody(text: string, targetTypes: readonly number[], uiLanguage: number): ObjectSearchInput {
  const filter: NonNullable<ObjectSearchInput["filter"]> = { deleted: false, uiLanguage };
  if (targetTypes.length) filter.objectTypeIds = [...targetTypes];
  const id = /^\s*#?(\d{1,10})\s*$/.exec(text);
  const q = id ? undefined : searchQuery(text);
  if (id) filter.objectIds = [Number(id[1])];
  else if (q) filter.fullText = q;
  return {
    filter,
    page: { skip: 0, take: pageSize },
    sortBy: q ? [{ sortBy: 0 }, { sortBy: 3 }] : [{ sortBy: 4, reverse: true }],
  };
}

/** moveActive is the active option after a key of the result list (-1: none); undefined: not a list key. */
export function moveActive(active: number, key: string, count: number): number | undefined {
  if (count === 0) return key === "ArrowDown" || key === "ArrowUp" ? -1 : undefined;
  switch (key) {
    case "ArrowDown":
      return active < 0 ? 0 : Math.min(count - 1, active + 1);
    case "ArrowUp":
      return active <= 0 ? 0 : active - 1;
    case "PageDown":
      return Math.min(count - 1, Math.max(0, active) + 10);
    case "PageUp":
      return Math.max(0, active - 10);
    case "Home":
      return 0;
    case "End":
      return count - 1;
  }
  return undefined;
}

/** move returns the list with the item at from moved to to (clamped); the list itself when nothing moves. */
export function move<T>(list: readonly T[], from: number, to: number): T[] {
  const t = Math.max(0, Math.min(list.length - 1, to));
  if (from < 0 || from >= list.length || from === t) return [...list];
  const out = [...list];
  const [x] = out.splice(from, 1);
  out.splice(t, 0, x as T);
  return out;
}

/** maxNameLength bounds the name of a new object (the API has its own limit too). */
export const maxNameLength = 200;

/** createBody is the CreateObjects request of "Create new": one object of type, named in language. */
export function createBody(type: number, name: string, language: number) {
  const objects: CmsObject[] = [{ meta: { typeRef: type }, values: [{ attribute: attr.name, language, variant: 0, value: name.trim() }] }];
  return { objects, comment: "Created in the studio's reference picker" };
}
