// The branch's content types: objects of the meta-type root (0) that are
// not system types, with their names; and the one system type the studio
// names in code, the users' (here, not in data/users.ts: the access probe
// of the first load needs it, and data/users.ts belongs to the lazily
// loaded Users screen).
import type { CmsObject } from "../api/generated/management";
import { api } from "../auth/session";
import { displayName } from "./values";

/** userType is the system type of the user objects (110), whose values carry the grants. */
export const userType = 110;

export interface TypeInfo {
  id: number;
  name: string;
  apiIdentifier?: string | undefined;
  object: CmsObject;
}

/**
 * isSystem: the system's own objects (types, attributes, languages) are
 * bootstrapped with fixed GUIDs 00000000-0000-0000-0000-<id in hex> and
 * protected (the API refuses to delete or change them).
 * Not meta.lastTransaction: it is 0 on a child branch
 * (nothing stored there).
 */
export function isSystem(o: CmsObject): boolean {
  return (o.meta?.guid ?? "").startsWith("00000000-0000-0000-0000-");
}

export function contentTypes(objs: CmsObject[], preferred: readonly number[]): TypeInfo[] {
  return objs
    .filter((o) => !isSystem(o) && !o.meta?.deleted)
    .map((o) => ({ id: o.meta?.id ?? 0, name: displayName(o, preferred), apiIdentifier: o.meta?.apiIdentifier, object: o }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
}

export async function loadTypes(branch: string, preferred: readonly number[], signal?: AbortSignal): Promise<TypeInfo[]> {
  const all: CmsObject[] = [];
  let next: string | undefined;
  for (let page = 0; page < 20; page++) {
    const { data } = await api.call("management", "GetTypedObjects",
      { branch, type: "root", inherited: true, deleted: false, take: 1000, continue: next }, undefined, { signal });
    all.push(...(data.objects ?? []));
    next = data.continue || undefined;
    if (!next) break;
  }
  return contentTypes(all, preferred);
}
