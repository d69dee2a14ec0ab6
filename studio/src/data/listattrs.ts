// The attributes a type's list names by ApiIdentifier (Delivery's props
// keys): their names for the column headers, read through Management in
// one request.
import type { CmsObject } from "../api/generated/management";
import { api } from "../auth/session";
import { attr, lang, values } from "./values";

/**
 * nameOf is an attribute's name (1000) in the first of the preferred
 * languages that has one, else its language-independent name, else any
 * name; undefined when it has none.
 */
export function nameOf(o: CmsObject, preferred: readonly number[]): string | undefined {
  for (const l of [...preferred, lang.none]) {
    const v = values(o, attr.name, l)[0]?.value;
    if (typeof v === "string" && v !== "") return v;
  }
  const any = values(o, attr.name).find((v) => typeof v.value === "string" && v.value !== "");
  return any ? String(any.value) : undefined;
}

/**
 * labelsOf maps each ApiIdentifier to the name of the object that carries
 * it (compared ignoring case, as the API resolves them); an ApiIdentifier
 * without an object or a name keeps itself as its label.
 */
export function labelsOf(apiIds: readonly string[], objs: readonly CmsObject[], preferred: readonly number[]): Record<string, string> {
  const byApi = new Map<string, CmsObject>();
  for (const o of objs) {
    const a = o.meta?.apiIdentifier;
    if (a) byApi.set(a.toLowerCase(), o);
  }
  const out: Record<string, string> = {};
  for (const id of apiIds) {
    const o = byApi.get(id.toLowerCase());
    out[id] = (o && nameOf(o, preferred)) || id;
  }
  return out;
}

/**
 * columnLabels reads the names of the column attributes (their
 * ApiIdentifiers) in one Management request: GetObjects with the
 * ApiIdentifiers as ids, inherited values (a child branch shows the names
 * its ancestors store) and only attribute 1000.
 */
export async function columnLabels(branch: string, apiIds: readonly string[], preferred: readonly number[], signal?: AbortSignal): Promise<Record<string, string>> {
  if (apiIds.length === 0) return {};
  const { data } = await api.call("management", "GetObjects",
    { branch, ids: apiIds.join(","), inherited: true, attributes: String(attr.name) }, undefined, { signal });
  return labelsOf(apiIds, data.objects ?? [], preferred);
}
