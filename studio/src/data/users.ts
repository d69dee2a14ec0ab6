// Users as the API keeps them: objects of the system type 110 on the
// default branch 4 (docs/security.md "Managing users"): user name 1100,
// display name 1000, password 1101 (write-only), admin 1102, internal
// 1103, readable branches 1104 and writable branches 1105 (multi-valued
// references). Disabling a user is a soft delete (a deleted user cannot
// sign in, its tokens are refused at the next request); enabling restores
// it. Administrators alone write users; every user reads its own account
// (GET /auth/account) and changes its own password (POST /auth/password).
import type { Account, CmsObject, CmsValue } from "../api/generated/management";
import type { BranchNode } from "./branches";
import { userType } from "./types";
import { displayName } from "./values";

export { userType };
export const usersBranch = "4";
export const userAttr = { name: 1000, userName: 1100, password: 1101, admin: 1102, internal: 1103, read: 1104, write: 1105 } as const;

/** maxPasswordBytes is the API's cap on a password (bcrypt's, UTF-8 bytes). */
export const maxPasswordBytes = 72;

export type Access = "none" | "read" | "write";

export interface User {
  id: number;
  userName: string;
  displayName: string;
  admin: boolean;
  internal: boolean;
  read: number[];
  write: number[];
  disabled: boolean;
}

/** toUser reads a user object's values (names in the preferred languages). */
export function toUser(o: CmsObject, preferred: readonly number[]): User {
  const vals = o.values ?? [];
  const one = (a: number) => vals.find((v) => v.attribute === a)?.value;
  const refs = (a: number) =>
    vals
      .filter((v) => v.attribute === a && typeof v.value === "number")
      .sort((x, y) => (x.sortReverse ?? 0) - (y.sortReverse ?? 0))
      .map((v) => v.value as number);
  const userName = typeof one(userAttr.userName) === "string" ? (one(userAttr.userName) as string) : "";
  return {
    id: o.meta?.id ?? 0,
    userName,
    displayName: displayName(o, preferred) || userName,
    admin: one(userAttr.admin) === true,
    internal: one(userAttr.internal) === true,
    read: refs(userAttr.read),
    write: refs(userAttr.write),
    disabled: o.meta?.deleted === true,
  };
}

/** sortUsers orders by user name, without case, then id. */
export function sortUsers(us: User[]): User[] {
  return us.slice().sort((a, b) => a.userName.localeCompare(b.userName, undefined, { sensitivity: "base" }) || a.id - b.id);
}

/** grants is the access chosen per branch as the two grant lists (write implies read: a branch is in one list only). */
export function grants(choice: ReadonlyMap<number, Access>): { read: number[]; write: number[] } {
  const read: number[] = [];
  const write: number[] = [];
  for (const [b, a] of [...choice].sort((x, y) => x[0] - y[0])) {
    if (a === "read") read.push(b);
    if (a === "write") write.push(b);
  }
  return { read, write };
}

/** choiceOf is the access granted directly per branch (write wins over read). */
export function choiceOf(read: readonly number[], write: readonly number[]): Map<number, Access> {
  const m = new Map<number, Access>();
  for (const b of read) m.set(b, "read");
  for (const b of write) m.set(b, "write");
  return m;
}

/**
 * effective is the access each branch of the tree gets from the grants: a
 * grant covers the branch and its descendants, write wins; from names the
 * granted branch the access comes from (itself or an ancestor).
 */
export function effective(tree: readonly BranchNode[], read: readonly number[], write: readonly number[]): Map<number, { access: Access; from: number }> {
  const byId = new Map(tree.map((n) => [n.id, n]));
  const out = new Map<number, { access: Access; from: number }>();
  for (const n of tree) {
    let access: Access = "none";
    let from = n.id;
    const seen = new Set<number>();
    for (let cur: BranchNode | undefined = n; cur && !seen.has(cur.id); cur = cur.parent !== undefined ? byId.get(cur.parent) : undefined) {
      seen.add(cur.id);
      if (write.includes(cur.id)) {
        access = "write";
        from = cur.id;
        break;
      }
      if (access === "none" && read.includes(cur.id)) {
        access = "read";
        from = cur.id;
      }
    }
    out.set(n.id, { access, from });
  }
  return out;
}

const row = (attribute: number, value: unknown, language = 0): CmsValue => ({ attribute, language, variant: 0, value: value as CmsValue["value"] });

/** refRows are the rows of a multi-valued reference: one per id in order, or one null row for none. */
export function refRows(attribute: number, ids: readonly number[]): CmsValue[] {
  if (ids.length === 0) return [row(attribute, null)];
  return ids.map((id, i) => ({ ...row(attribute, id), sortReverse: i }));
}

export interface NewUser {
  userName: string;
  displayName: string;
  password: string;
  admin: boolean;
  internal: boolean;
  choice: ReadonlyMap<number, Access>;
}

/** newUserBody is the CreateObjects body of a user (display name in language 201, the system's default). */
export function newUserBody(u: NewUser, comment: string) {
  const g = grants(u.choice);
  const values: CmsValue[] = [
    row(userAttr.userName, u.userName.trim()),
    row(userAttr.name, u.displayName.trim() || u.userName.trim(), 201),
    row(userAttr.password, u.password),
    row(userAttr.admin, u.admin),
    row(userAttr.internal, u.internal),
  ];
  if (g.read.length) values.push(...refRows(userAttr.read, g.read));
  if (g.write.length) values.push(...refRows(userAttr.write, g.write));
  return { comment, objects: [{ meta: { typeRef: userType }, values }] };
}

/** userPatch is the UpdateObjects body that changes a user's flags and grants (and, given, the password or the disabled state). */
export function userPatch(id: number, change: { admin?: boolean; internal?: boolean; choice?: ReadonlyMap<number, Access>; password?: string; enable?: boolean }, comment: string) {
  const values: CmsValue[] = [];
  if (change.admin !== undefined) values.push(row(userAttr.admin, change.admin));
  if (change.internal !== undefined) values.push(row(userAttr.internal, change.internal));
  if (change.choice) {
    const g = grants(change.choice);
    values.push(...refRows(userAttr.read, g.read), ...refRows(userAttr.write, g.write));
  }
  if (change.password !== undefined) values.push(row(userAttr.password, change.password));
  const meta: { id: number; typeRef: number; deleted?: boolean } = { id, typeRef: userType };
  if (change.enable) meta.deleted = false;
  return { comment, objects: [{ meta, values }] };
}

/** passwordProblem says what is wrong with a new password, or undefined: the API's rules (not empty, at most 72 UTF-8 bytes) and the repetition. */
export function passwordProblem(pw: string, repeat: string): "empty" | "long" | "mismatch" | undefined {
  if (pw.trim() === "") return "empty";
  if (new TextEncoder().encode(pw).length > maxPasswordBytes) return "long";
  if (pw !== repeat) return "mismatch";
  return undefined;
}

/** accountGrants lists the branches an account reaches, tree order, with the access and where it comes from. */
export function accountGrants(a: Account, tree: readonly BranchNode[]): { branch: BranchNode; access: Access; from: number }[] {
  const eff = effective(tree, a.readBranches ?? [], a.writeBranches ?? []);
  const out: { branch: BranchNode; access: Access; from: number }[] = [];
  for (const n of tree) {
    const e = eff.get(n.id);
    if (a.admin) out.push({ branch: n, access: "write", from: n.id });
    else if (e && e.access !== "none") out.push({ branch: n, access: e.access, from: e.from });
  }
  return out;
}
