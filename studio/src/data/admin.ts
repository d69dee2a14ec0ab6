// Whether the signed-in user is an administrator (user attribute 1102),
// so that the studio offers administrators' views (Operations) to them
// only. User objects (type 110 on branch 4) are read by administrators and
// by the user itself only (docs/security.md): the studio lists the first
// two with the login name and the admin flag. Another user's object in the
// answer means the caller reads every user, so is an administrator; else
// the own object's flag says; a 403 (no read of branch 4) is no
// administrator. Nothing here grants anything: the server decides every
// call on its own.
import type { CmsObject } from "../api/generated/management";
import { api, session } from "../auth/session";
import { createStore, type Store } from "../store";

const userBranch = "4";
const userType = "110";
const attrLogin = 1100;
const attrAdmin = 1102;

/** Admin: what the studio knows of the user's administrator flag. */
export type Admin = "checking" | "yes" | "no";

/** adminOf reads the probe's answer for the login user. */
export function adminOf(user: string, objects: readonly CmsObject[]): Admin {
  let own: CmsObject | undefined;
  for (const o of objects) {
    const login = o.values?.find((v) => v.attribute === attrLogin)?.value;
    if (typeof login !== "string") continue;
    if (login !== user) return "yes"; // only administrators read other users
    own = o;
  }
  return own?.values?.some((v) => v.attribute === attrAdmin && v.value === true) ? "yes" : "no";
}

const stores = new Map<string, Store<Admin>>();

/**
 * adminStore is the store of the signed-in user's flag, checked once per
 * user name while the page lives (not per token: a renewal changes no
 * flag, and a new check would hide the entry for a moment).
 */
export function adminStore(): Store<Admin> {
  const s = session.get();
  const k = s?.user ?? "";
  let st = stores.get(k);
  if (st) return st;
  const store = createStore<Admin>(s ? "checking" : "no");
  stores.set(k, store);
  st = store;
  if (s) {
    api.call("management", "GetTypedObjects", { branch: userBranch, type: userType, attributes: `${attrLogin},${attrAdmin}`, take: 2 }).then(
      ({ data }) => store.set(adminOf(s.user, data.objects ?? [])),
      () => store.set("no"), // 403 (no read of branch 4), or not known: the navigation entry stays hidden
    );
  }
  return st;
}
