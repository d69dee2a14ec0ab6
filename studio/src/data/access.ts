// Whether the signed-in user may write a branch, so that views show it
// read-only with the reason instead of letting an editor work and then
// refusing the save. The studio asks the write operation itself with
// nothing to write (exact for any branch, grants on ancestors included):
// the authorization runs before the handler (docs/security.md), so
// `PATCH /branches/{b}/objects` with `{"objects": []}` answers 403 without
// a write grant and 400 ("no objects given") with one; nothing is written
// either way. Answers are kept 30 s per branch and user; recheckAccess asks
// again at once (a view does when its user's grants may have changed: a
// change of the user's own object on the stream, the stream live again
// after a gap, the tab shown again, every 30 s),
// and a 403 from a real write replaces the answer at once (markReadOnly).
// A grant lost while the studio knew the branch writable is explained as
// removed (revoked), by a refused save or by such a check.
import { ApiError } from "../api/client";
import { api, session } from "../auth/session";
import { createStore, type Store } from "../store";
import { userType } from "./types";

/** How the studio learned that a write grant it had seen was removed: a save refused, a Delete or Restore refused, or a check while the view was open. */
export type RevokedBy = "save" | "write" | "check";

/** Access is what the studio knows of the user's permission on a branch. */
export type Access =
  | { kind: "checking" }
  | { kind: "write" }
  | { kind: "read"; detail?: string | undefined; revoked: boolean; by?: RevokedBy | undefined };

/** accessOf reads the probe's answer: 403 read-only, a 400 (the empty write refused by the handler) writable. */
export function accessOf(e: unknown): Access {
  if (e instanceof ApiError && e.status === 403) return { kind: "read", detail: e.problem.detail, revoked: false };
  return { kind: "write" }; // 400 as expected; anything else (offline, 5xx): not known, the save will say
}

/**
 * nextAccess is the access after a probe's answer: a grant known before and
 * missing now is revoked (found by a check); a revoked grant stays explained
 * as it was found while it is missing; a grant given back is write again.
 */
export function nextAccess(cur: Access, next: Access): Access {
  if (next.kind !== "read") return next;
  if (cur.kind === "read" && cur.revoked) return cur;
  if (cur.kind === "write") return { ...next, revoked: true, by: "check" };
  return next;
}

const keep = 30_000;
interface Entry { store: Store<Access>; at: number; asking: boolean; again: boolean; refused: number }
const stores = new Map<string, Entry>();

function keyOf(branch: string): string {
  return `${session.get()?.user ?? ""}\u0000${branch}`;
}

function entry(branch: string): Entry {
  const k = keyOf(branch);
  let e = stores.get(k);
  if (!e) {
    e = { store: createStore<Access>({ kind: "checking" }), at: 0, asking: false, again: false, refused: 0 };
    stores.set(k, e);
  }
  return e;
}

// One probe at a time per branch: asked meanwhile, it asks once more when
// the answer is in (the one on its way may have been authorized before the
// change that made the caller ask).
function ask(branch: string, e: Entry, now: number) {
  if (e.asking) {
    e.again = true;
    return;
  }
  e.at = now;
  e.asking = true;
  e.again = false;
  const s = e.store;
  const refused = e.refused;
  // A save refused while the probe was on its way is newer than its answer.
  const settle = (a: Access) => e.refused === refused && s.set(nextAccess(s.get(), a));
  // Untracked: it writes nothing, so the change stream does not hold events back for its answer.
  api.call("management", "UpdateObjects", { branch }, { objects: [] }, { untracked: true }).then(
    () => settle({ kind: "write" }), // never answered so; taken as writable
    (err) => settle(accessOf(err)),
  ).finally(() => {
    e.asking = false;
    if (e.again) ask(branch, e, Date.now());
  });
}

/** branchAccess is the store of the user's access to branch, checked when first asked and again after 30 s. */
export function branchAccess(branch: string, now = Date.now()): Store<Access> {
  const e = entry(branch);
  if (now - e.at > keep) ask(branch, e, now);
  return e.store;
}

/**
 * recheckAccess asks again now (the user's grants may have changed); with a
 * probe on its way, once more after it. With maxAge (ms) it asks only when
 * no probe is on its way and the last one started longer ago: returning to
 * the tab fires focus and visibilitychange together, which need one probe.
 */
export function recheckAccess(branch: string, now = Date.now(), maxAge = 0) {
  const e = entry(branch);
  if (maxAge > 0 && (e.asking || now - e.at < maxAge)) return;
  ask(branch, e, now);
}

/**
 * noteRefusal records a write's 403 on branch as markReadOnly does (a save,
 * a Delete, a Restore refused: the grant was removed while the view was
 * open); any other error leaves the access as it is.
 */
export function noteRefusal(branch: string, e: unknown) {
  if (e instanceof ApiError && e.status === 403) markReadOnly(branch, e.problem.detail, "write");
}

/** markReadOnly records a 403 of a write on branch (a grant removed while the view was open). */
export function markReadOnly(branch: string, detail: string | undefined, by: RevokedBy = "save") {
  const e = entry(branch);
  e.refused++;
  e.store.set({ kind: "read", detail, revoked: true, by });
}

/**
 * grantsMayHaveChanged reports a change after which the user's access is
 * asked again: a change of the signed-in user's own user object (the grants
 * are its values; the stream of a branch carries the changes of the default
 * branch, an ancestor, where the users live), or a reset (changes missed).
 * ownUserId is the account's user object: null while the account is not
 * read yet (then a change of any user object may be the own one), 0 for a
 * caller without one (no user object's change is its own).
 */
export function grantsMayHaveChanged(c: { kind: string; objectIds: readonly number[]; types: readonly number[] }, ownUserId: number | null): boolean {
  if (c.kind === "reset") return true;
  if (ownUserId === null) return c.types.includes(userType);
  return ownUserId > 0 && c.objectIds.includes(ownUserId);
}
