// Reading what the object editor shows, in as few round trips as the API
// allows: the object on this branch (local rows and ETag, and the view with
// inherited values), its type's attributes (the content of the type's create
// and detail forms, plus those the object uses), the languages with their
// fallbacks, and the object's local rows on every ancestor branch (in
// parallel) for provenance. Type, attribute and language definitions are
// cached for the session; the object never is.
import { ApiError } from "../../api/client";
import type { CmsObject } from "../../api/generated/management";
import { api } from "../../auth/session";
import { displayName, value, values } from "../../data/values";
import { chainOf, type BranchRows } from "../../data/provenance";
import type { AttributeInfo } from "./fields/registry";
import { type Variant, variantsOf } from "./variants";

export const attrIds = {
  name: 1000, dataType: 1001, variantAxis: 1002, multiple: 1004, description: 1012, targetTypes: 1015, languageDependent: 1017, required: 1018,
  apiIdentifier: 1021, isoCode: 2001, fallback: 2002, parent: 4000, createForm: 5001, detailForms: 5002, formContent: 5053,
} as const;

export interface Language {
  id: number;
  code: string;
  name: string;
  fallback: number;
}

export interface Loaded {
  /** The object as stored on this branch (inherited=false): its ETag is what a write's If-Match takes. */
  local: CmsObject;
  etag: string | null;
  /** The object as this branch shows it (inherited=true). */
  effective: CmsObject;
  /** This branch and its ancestors with their local rows, nearest first. */
  chain: BranchRows[];
  attributes: AttributeInfo[];
  languages: Language[];
  branchNames: Map<number, string>;
  /** The variants the type's attributes declare (the objects of their variant axes), by axis then name. */
  variants: Variant[];
}

const cache = new Map<string, Promise<unknown>>();

function cached<T>(key: string, f: () => Promise<T>): Promise<T> {
  let p = cache.get(key) as Promise<T> | undefined;
  if (!p) {
    p = f();
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return p;
}

const nums = (o: CmsObject | undefined, a: number): number[] =>
  o ? values(o, a, 0).map((v) => v.value).filter((x): x is number => typeof x === "number") : [];

/**
 * loadLanguages reads the languages (objects of type 20, stored on branch 4)
 * as branch shows them: a reader of a child branch may not read branch 4.
 */
export function loadLanguages(branch: string, preferred: readonly number[]): Promise<Language[]> {
  return cached(`languages:${branch}:${preferred.join(",")}`, async () => {
    const { data } = await api.call("management", "GetTypedObjects",
      { branch, type: "20", inherited: true, deleted: false, take: 1000, attributes: "1000,2001,2002" });
    return (data.objects ?? []).map((o) => ({
      id: o.meta?.id ?? 0,
      code: String(value(o, attrIds.isoCode, 0) ?? o.meta?.id ?? ""),
      name: displayName(o, preferred),
      fallback: Number(value(o, attrIds.fallback, 0) ?? 0),
    })).sort((a, b) => a.id - b.id);
  });
}

interface BranchInfo {
  parents: Map<number, number | undefined>;
  names: Map<number, string>;
}

function loadBranchInfo(preferred: readonly number[]): Promise<BranchInfo> {
  return cached(`branches:${preferred.join(",")}`, async () => {
    const parents = new Map<number, number | undefined>();
    const names = new Map<number, string>();
    let next: string | undefined;
    for (let page = 0; page < 20; page++) {
      const { data } = await api.call("management", "GetBranches", { take: 1000, attributes: "1000,4000", continue: next });
      for (const o of data.objects ?? []) {
        const id = o.meta?.id ?? 0;
        const p = value(o, attrIds.parent, 0);
        parents.set(id, typeof p === "number" && p !== id ? p : undefined);
        names.set(id, displayName(o, preferred));
      }
      next = data.continue || undefined;
      if (!next) break;
    }
    return { parents, names };
  });
}

async function objectsByIds(branch: string, ids: number[], attributes: string): Promise<CmsObject[]> {
  const out: CmsObject[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    const { data } = await api.call("management", "GetObjects",
      { branch, ids: ids.slice(i, i + 100).join(","), inherited: true, attributes });
    out.push(...(data.objects ?? []));
  }
  return out;
}

/** formAttributes are the attribute ids the type's forms list (cached per branch and type). */
function formAttributes(branch: string, type: string): Promise<number[]> {
  return cached(`forms:${branch}:${type}`, async () => {
    const { data: t } = await api.call("management", "GetObject", { branch, id: type, inherited: true, attributes: "5001,5002" });
    const forms = [...nums(t, attrIds.createForm), ...nums(t, attrIds.detailForms)];
    if (forms.length === 0) return [];
    const fs = await objectsByIds(branch, forms, "5053");
    return [...new Set(fs.flatMap((f) => nums(f, attrIds.formContent)))];
  });
}

const attrCache = new Map<string, AttributeInfo>();

async function attributeInfos(branch: string, ids: number[], preferred: readonly number[]): Promise<AttributeInfo[]> {
  const key = (id: number) => `${branch}:${preferred.join(",")}:${id}`;
  const missing = ids.filter((id) => !attrCache.has(key(id)));
  if (missing.length > 0) {
    const objs = await objectsByIds(branch, missing, "1000,1001,1002,1004,1012,1015,1017,1018");
    for (const o of objs) {
      const id = o.meta?.id ?? 0;
      attrCache.set(key(id), {
        id,
        apiIdentifier: o.meta?.apiIdentifier,
        name: displayName(o, preferred),
        dataType: String(value(o, attrIds.dataType, 0) ?? ""),
        languageDependent: value(o, attrIds.languageDependent, 0) === true,
        multiple: value(o, attrIds.multiple, 0) === true,
        required: value(o, attrIds.required, 0) === true,
        targetTypes: nums(o, attrIds.targetTypes),
        variantAxis: nums(o, attrIds.variantAxis)[0] ?? 0,
        object: o,
      });
    }
  }
  return ids.map((id) => attrCache.get(key(id))).filter((a): a is AttributeInfo => !!a);
}

/**
 * localRows reads the object's rows stored on one branch; nothing stored
 * there (404) is null, and so is an ancestor the user may not read (403:
 * a reader of a child branch only; its rows then count as none).
 */
async function localRows(branch: string, id: string, ancestor = false): Promise<{ object: CmsObject | null; etag: string | null }> {
  try {
    const { data, etag } = await api.call("management", "GetObject", { branch, id, inherited: false });
    return { object: data, etag };
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || (ancestor && e.status === 403))) return { object: null, etag: null };
    throw e;
  }
}

/** loadObject reads everything the editor shows of object id on branch. */
export async function loadObject(branch: string, type: string, id: string, preferred: readonly number[], minVersion?: number): Promise<Loaded> {
  const opts = minVersion ? { minVersion } : {};
  // The attributes the object uses are read as soon as it arrives, beside
  // the type's forms; only form attributes it does not use wait for those.
  const effectiveP = api.call("management", "GetObject", { branch, id, inherited: true }, undefined, opts);
  const usedP = effectiveP.then((e) => attributeInfos(branch, [...new Set([attrIds.name, ...(e.data.values ?? []).map((v) => v.attribute ?? 0)])], preferred));
  const branchesP = loadBranchInfo(preferred);
  const localP = api.call("management", "GetObject", { branch, id, inherited: false }, undefined, opts);
  const bid = Number(branch);
  const chainP = branchesP.then((b) => (Number.isInteger(bid) && bid > 0 ? chainOf(bid, b.parents) : [bid]));
  const ancestorsP = Promise.all([chainP, localP]).then(([c, l]) =>
    Promise.all(c.slice(1).map((b) => localRows(String(b), String(l.data.meta?.id ?? id), true))));
  const [local, effective, branches, languages, formAttrs, chainIds, ancestors] = await Promise.all([
    localP, effectiveP, branchesP, loadLanguages(branch, preferred), formAttributes(branch, type), chainP, ancestorsP, usedP,
  ]);
  const used = (effective.data.values ?? []).map((v) => v.attribute ?? 0);
  const ids = [attrIds.name as number, ...formAttrs, ...used].filter((x, i, a) => x > 0 && a.indexOf(x) === i);
  const attributes = await attributeInfos(branch, ids, preferred);
  const variants = await loadVariants(branch, attributes, preferred);
  const chain: BranchRows[] = [
    { branch: chainIds[0] ?? 0, object: local.data },
    ...ancestors.map((a, i) => ({ branch: chainIds[i + 1] ?? 0, object: a.object })),
  ];
  return { local: local.data, etag: local.etag, effective: effective.data, chain, attributes, languages, branchNames: branches.names, variants };
}

/**
 * loadVariants reads the variants of the attributes' variant axes (1002):
 * an axis is a type, its variants are that type's objects (cached per
 * branch and axis for the session; at most 1000 per axis).
 */
async function loadVariants(branch: string, attributes: AttributeInfo[], preferred: readonly number[]): Promise<Variant[]> {
  const axes = [...new Set(attributes.map((a) => a.variantAxis).filter((x) => x > 0))];
  if (axes.length === 0) return [];
  const [axisObjs, members] = await Promise.all([
    cached(`axes:${branch}:${axes.join(",")}:${preferred.join(",")}`, () => objectsByIds(branch, axes, "1000")),
    Promise.all(axes.map((ax) => cached(`variants:${branch}:${ax}`, async () => {
      const { data } = await api.call("management", "GetTypedObjects",
        { branch, type: String(ax), inherited: true, deleted: false, take: 1000, attributes: "1000" });
      return data.objects ?? [];
    }))),
  ]);
  return variantsOf(axes, axisObjs, members, preferred);
}

/** readLocal reads the object's local rows and ETag again (after a 412). */
export async function readLocal(branch: string, id: string): Promise<{ object: CmsObject | null; etag: string | null }> {
  return localRows(branch, id);
}
