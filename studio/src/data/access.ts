// Whether the signed-in user may write a branch, so that views show it
// read-only with the reason instead of letting an editor work and then
// refusing the save. The API has no read of one's own grants (user objects
// live on branch 4, which a writer of a child branch may not read), so the
// studio asks the write operation itself with nothing to write: the
// authorization runs before the handler (docs/security.md), so
// `PATCH /branches/{b}/objects` with `{"objects": []}` answers 403 without
// a write grant and 400 ("no objects given") with one; nothing is written
// either way. Answers are kept 30 s per branch and token; a 403 from a real
// write replaces the answer at once (markReadOnly).
import { ApiError } from "../api/client";
import { api, session } from "../auth/session";
import { createStore, type Store } from "../store";

/** Access is what the studio knows of the user's permission on a branch. */
export type Access =
  | { kind: "checking" }
  | { kind: "write" }
  | { kind: "read"; detail?: string | undefined; revoked: boolean };

/** accessOf reads the probe's answer: 403 read-only, a 400 (the empty write refused by the handler) writable. */
export function accessOf(e: unknown): Access {
  if (e instanceof ApiError && e.status === 403) return { kind: "read", detail: e.problem.detail, revoked: false };
  return { kind: "write" }; // 400 as expected; anything else (offline, 5xx): not known, the save will say
}

/** nextAccess is the access after a probe's answer: a revoked grant stays explained as revoked while it is missing. */
export function nextAccess(cur: Access, next: Access): Access {
  return cur.kind === "read" && cur.revoked && next.kind === "read" ? cur : next;
}

const keep = 30_000;
const stores = new Map<string, { store: Store<Access>; at: number }>();

function keyOf(branch: string): string {
  return `${session.get()?.user ?? ""}\u0000${branch}`;
}

/** branchAccess is the store of the user's access to branch, checked when first asked and again after 30 s. */
export function branchAccess(branch: string, now = Date.now()): Store<Access> {
  const k = keyOf(branch);
  let e = stores.get(k);
  if (!e) {
    e = { store: createStore<Access>({ kind: "checking" }), at: 0 };
    stores.set(k, e);
  }
  if (now - e.at > keep) {
    e.at = now;
    const s = e.store;
    api.call("management", "UpdateObjects", { branch }, { objects: [] }).then(
      () => s.set(nextAccess(s.get(), { kind: "write" })), // never answered so; taken as writable
      (err) => s.set(nextAccess(s.get(), accessOf(err))),
    );
  }
  return e.store;
}

/** markReadOnly records a 403 of a write on branch (a grant removed while the view was open). */
export function markReadOnly(branch: string, detail: string | undefined) {
  branchAccess(branch).set({ kind: "read", detail, revoked: true });
}
