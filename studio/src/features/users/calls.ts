// The Users screen's calls: user objects on branch 4 through the generic
// object operations (docs/security.md "Managing users"); the bodies are
// built by data/users.ts.
import type { CmsObject } from "../../api/generated/management";
import { api } from "../../auth/session";
import { type Access, newUserBody, type NewUser, toUser, type User, userPatch, userType, usersBranch } from "../../data/users";

const attributes = "1000,1100,1102,1103,1104,1105";

/** listUsers reads every user, disabled ones included (pages of 1000). */
export async function listUsers(preferred: readonly number[], signal?: AbortSignal): Promise<User[]> {
  const all: CmsObject[] = [];
  let next: string | undefined;
  for (let page = 0; page < 50; page++) {
    const { data } = await api.call("management", "GetTypedObjects",
      { branch: usersBranch, type: String(userType), take: 1000, attributes, continue: next }, undefined, { signal });
    all.push(...(data.objects ?? []));
    next = data.continue || undefined;
    if (!next) break;
  }
  return all.map((o) => toUser(o, preferred));
}

export async function createUser(u: NewUser, comment: string): Promise<number> {
  const { data } = await api.call("management", "CreateObjects", { branch: usersBranch }, newUserBody(u, comment));
  return data.createdObjectIds?.[0] ?? 0;
}

export async function updateUser(id: number, change: { admin?: boolean; internal?: boolean; choice?: ReadonlyMap<number, Access>; password?: string; enable?: boolean }, comment: string) {
  await api.call("management", "UpdateObjects", { branch: usersBranch }, userPatch(id, change, comment));
}

/** disableUser soft-deletes the user: it cannot sign in, its tokens are refused at once. */
export async function disableUser(id: number, comment: string) {
  await api.call("management", "DeleteObjects", { branch: usersBranch }, { comment, objectIds: [String(id)] });
}
