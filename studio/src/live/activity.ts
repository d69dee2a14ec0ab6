// What the activity popover shows: the recent changes by others, each with
// the names of its objects (read once per object and version from
// Management, in one request per change) and a time in words.
import type { CmsObject } from "../api/generated/management";
import { api } from "../auth/session";
import { displayName } from "../data/values";
import type { LiveChange } from "./changes";

/** others are the changes not written by this tab, newest first (resets are never kept). */
export function others(changes: readonly LiveChange[]): LiveChange[] {
  return changes.filter((c) => !c.own && c.kind !== "reset");
}

/** ObjectRef is what a change names: an object, its name and its type (0 when unknown). */
export interface ObjectRef {
  id: number;
  name: string;
  type: number;
}

/** Ago is a time in words: "now" under a minute, else minutes, hours or days. */
export type Ago = { unit: "now" } | { unit: "minute" | "hour" | "day"; n: number };

export function ago(at: number, now: number): Ago {
  const s = Math.max(0, Math.floor((now - at) / 1000));
  if (s < 60) return { unit: "now" };
  if (s < 3600) return { unit: "minute", n: Math.floor(s / 60) };
  if (s < 86400) return { unit: "hour", n: Math.floor(s / 3600) };
  return { unit: "day", n: Math.floor(s / 86400) };
}

/** maxNamed bounds the objects of one change that are named (the rest are counted). */
export const maxNamed = 5;

const cache = new Map<string, Promise<ObjectRef[]>>();

/** refsOf reads the names and types of a change's objects (at most maxNamed; unknown ones as "#id"). */
export function refsOf(branch: string, c: LiveChange, preferred: readonly number[]): Promise<ObjectRef[]> {
  const ids = c.kind === "branchDeleted" ? [] : c.objectIds.slice(0, maxNamed);
  const key = `${branch}/${c.version}/${preferred.join(",")}`;
  let p = cache.get(key);
  if (!p) {
    p = readRefs(branch, ids, preferred);
    cache.set(key, p);
    if (cache.size > 200) cache.delete(cache.keys().next().value as string);
  }
  return p;
}

const users = new Map<string, Promise<string>>();

/** userName is a user's display name (GetUserDisplayName), else the user name itself; read once per user. */
export function userName(name: string, preferred: readonly number[]): Promise<string> {
  if (!name) return Promise.resolve("");
  let p = users.get(name);
  if (!p) {
    p = api.call("management", "GetUserDisplayName", { name }).then(
      ({ data }) => (data ? displayName(data, preferred) : name) || name,
      () => name,
    ).then((n) => (n.startsWith("#") ? name : n));
    users.set(name, p);
    if (users.size > 200) users.delete(users.keys().next().value as string);
  }
  return p;
}

async function readRefs(branch: string, ids: number[], preferred: readonly number[]): Promise<ObjectRef[]> {
  const fallback = (id: number): ObjectRef => ({ id, name: `#${id}`, type: 0 });
  if (ids.length === 0) return [];
  try {
    const { data } = await api.call("management", "GetObjects", { branch, ids: ids.join(","), inherited: true, attributes: "1000" });
    const byId = new Map<number, CmsObject>((data.objects ?? []).map((o) => [o.meta?.id ?? 0, o]));
    return ids.map((id) => {
      const o = byId.get(id);
      return o ? { id, name: displayName(o, preferred), type: o.meta?.typeRef ?? 0 } : fallback(id);
    });
  } catch {
    return ids.map(fallback); // deleted since, or no longer readable: the id still says which
  }
}
