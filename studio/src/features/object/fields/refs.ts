// What a reference card shows of an object: its name, type and whether it
// is there, read through Management GetObjects — the ids asked for within
// one tick in one request (a list of references is one round trip), kept
// per branch for the page's lifetime (a name changed elsewhere shows after
// a reload). Thumbnails of binary proxy objects come from Delivery with
// the bearer token, as blob: URLs.
import { ApiError } from "../../../api/client";
import type { CmsObject } from "../../../api/generated/management";
import { api } from "../../../auth/session";
import { displayName } from "../../../data/values";

export interface RefInfo {
  id: number;
  name: string;
  typeRef?: number | undefined;
  deleted: boolean;
}

const cache = new Map<string, Promise<RefInfo | null>>();
let pending: { branch: string; ids: Map<number, (r: RefInfo | null, e?: unknown) => void> } | null = null;

/** maxBatch bounds the ids of one GetObjects request. */
const maxBatch = 100;

function info(o: CmsObject, preferred: readonly number[]): RefInfo {
  return { id: o.meta?.id ?? 0, name: displayName(o, preferred), typeRef: o.meta?.typeRef, deleted: !!o.meta?.deleted };
}

/** refInfo is the object id on branch (null: there is no such object). */
export function refInfo(branch: string, id: number, preferred: readonly number[]): Promise<RefInfo | null> {
  const key = `${branch}\u0000${id}\u0000${preferred.join(",")}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const p = new Promise<RefInfo | null>((resolve, reject) => {
    if (!pending || pending.branch !== branch || pending.ids.size >= maxBatch) {
      const batch = { branch, ids: new Map<number, (r: RefInfo | null, e?: unknown) => void>() };
      pending = batch;
      queueMicrotask(() => {
        if (pending === batch) pending = null;
        void flush(batch.branch, batch.ids, preferred);
      });
    }
    pending.ids.set(id, (r, e) => (e === undefined ? resolve(r) : reject(e)));
  });
  cache.set(key, p);
  p.catch(() => cache.delete(key)); // an error is not remembered
  return p;
}

/** remember puts an object just created into the cache. */
export function remember(branch: string, r: RefInfo, preferred: readonly number[]) {
  cache.set(`${branch}\u0000${r.id}\u0000${preferred.join(",")}`, Promise.resolve(r));
}

async function flush(branch: string, ids: Map<number, (r: RefInfo | null, e?: unknown) => void>, preferred: readonly number[]) {
  const want = [...ids.keys()];
  try {
    const { data } = await api.call("management", "GetObjects", { branch, ids: want.join(","), inherited: true, attributes: "1000" });
    const got = new Map((data.objects ?? []).map((o) => [o.meta?.id, o]));
    for (const [id, done] of ids) {
      const o = got.get(id);
      done(o ? info(o, preferred) : null);
    }
  } catch (e) {
    // One id the API does not know can fail the whole request: ask each alone.
    if (e instanceof ApiError && e.status === 404 && want.length > 1) {
      await Promise.all(want.map((id) => flush(branch, new Map([[id, ids.get(id)!]]), preferred)));
      return;
    }
    if (e instanceof ApiError && e.status === 404) {
      ids.forEach((done) => done(null));
      return;
    }
    ids.forEach((done) => done(null, e));
  }
}

/** thumbnail is a blob: URL of the binary proxy object's thumbnail (the caller revokes it); null: it has none. */
export async function thumbnail(branch: string, id: number, size: number, signal: AbortSignal): Promise<string | null> {
  try {
    const b = await api.blob("delivery", "GetBpoThumbnail", { branch, id: String(id), size }, { signal });
    return URL.createObjectURL(b);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 422)) return null;
    throw e;
  }
}
