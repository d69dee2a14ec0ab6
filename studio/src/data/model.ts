// The schema through the Management API. Types are objects of the
// meta-type root (typeRef 0), attributes objects of type 10. A type lists
// no attributes directly: its forms (5001 create form, 5002 detail forms,
// objects of type 50) list them in 5053 formContent, the rule Delivery and
// the code generator read too. The studio keeps one detail form per type
// it edits and creates it with the type's first attribute.
import type { CmsObject, CmsValue } from "../api/generated/management";
import { api } from "../auth/session";
import { isSystem } from "./types";
import { displayName, values } from "./values";

export const typeRoot = 0;
export const typeAttribute = 10;
export const typeLanguage = 20;
export const typeForm = 50;

/** The attributes of the meta-model the editor reads and writes. */
export const A = {
  name: 1000,
  dataType: 1001,
  multi: 1004,
  maxValues: 1014,
  refTypes: 1015,
  langDep: 1017,
  required: 1018,
  isoCode: 2001,
  createForm: 5001,
  detailForms: 5002,
  displayName: 5005,
  formContent: 5053,
} as const;

/** The data types the editor offers (attribute 1001), in the picker's order. */
export const dataTypes = [
  "String", "TextRef", "XmlRef.SimpleHtml", "Integer", "Decimal", "Float", "Boolean",
  "DateTime", "DateTime.Date", "ObjRef", "BinRef",
] as const;
export type DataType = (typeof dataTypes)[number];

export const isReference = (dt: string) => dt === "ObjRef";
export const isBinary = (dt: string) => dt.startsWith("BinRef");

export interface Language {
  id: number;
  name: string;
  code: string;
}

/** Names are an object's 1000 values by language id. */
export type Names = Record<number, string>;

export interface AttributeDef {
  id: number;
  apiIdentifier?: string | undefined;
  names: Names;
  dataType: string;
  multi: boolean;
  /** 1014: 0 or absent = no limit. */
  maxValues: number;
  refTypes: number[];
  langDep: boolean;
  required: boolean;
  system: boolean;
}

export interface TypeDef {
  id: number;
  apiIdentifier?: string | undefined;
  names: Names;
  displayNameAttr?: number | undefined;
  createForm?: number | undefined;
  detailForms: number[];
  system: boolean;
  deleted: boolean;
}

/** The drafts the dialogs edit. */
export interface TypeDraft {
  apiIdentifier: string;
  names: Names;
}

export interface AttributeDraft {
  apiIdentifier: string;
  names: Names;
  dataType: string;
  multi: boolean;
  maxValues: number;
  refTypes: number[];
  langDep: boolean;
  required: boolean;
}

function names(o: CmsObject): Names {
  const out: Names = {};
  for (const v of values(o, A.name)) if (typeof v.value === "string") out[v.language ?? 0] = v.value;
  return out;
}

function first(o: CmsObject, attribute: number): unknown {
  return values(o, attribute)[0]?.value;
}

function refs(o: CmsObject, attribute: number): number[] {
  return values(o, attribute)
    .slice()
    .sort((a, b) => (a.sortReverse ?? 0) - (b.sortReverse ?? 0))
    .map((v) => v.value)
    .filter((v): v is number => typeof v === "number");
}

export function parseType(o: CmsObject): TypeDef {
  const dn = first(o, A.displayName);
  const cf = first(o, A.createForm);
  return {
    id: o.meta?.id ?? 0,
    apiIdentifier: o.meta?.apiIdentifier || undefined,
    names: names(o),
    displayNameAttr: typeof dn === "number" ? dn : undefined,
    createForm: typeof cf === "number" ? cf : undefined,
    detailForms: refs(o, A.detailForms),
    system: isSystem(o),
    deleted: !!o.meta?.deleted,
  };
}

export function parseAttribute(o: CmsObject): AttributeDef {
  const dt = first(o, A.dataType);
  const max = first(o, A.maxValues);
  return {
    id: o.meta?.id ?? 0,
    apiIdentifier: o.meta?.apiIdentifier || undefined,
    names: names(o),
    dataType: typeof dt === "string" ? dt : "",
    multi: first(o, A.multi) === true,
    maxValues: typeof max === "number" ? max : 0,
    refTypes: refs(o, A.refTypes),
    langDep: first(o, A.langDep) === true,
    required: first(o, A.required) === true,
    system: isSystem(o),
  };
}

/** nameIn is a name in the first of the preferred languages that has one. */
export function nameIn(n: Names, preferred: readonly number[], fallback: string): string {
  for (const l of [...preferred, 0]) if (n[l]) return n[l];
  const any = Object.values(n).find((s) => s);
  return any ?? fallback;
}

const row = (attribute: number, value: unknown, language = 0, sortReverse = 0): CmsValue => ({
  attribute, language, variant: 0, value, sortReverse,
});

/**
 * nameRows are the 1000 rows of a draft: one per language with a name; on
 * an update, a name that was removed is sent as null (the API removes it).
 */
export function nameRows(next: Names, before: Names | undefined): CmsValue[] {
  const out: CmsValue[] = [];
  const langs = new Set([...Object.keys(next), ...Object.keys(before ?? {})].map(Number));
  for (const l of [...langs].sort((a, b) => a - b)) {
    const v = (next[l] ?? "").trim();
    if (v) {
      if (before?.[l] !== v) out.push(row(A.name, v, l));
    } else if (before?.[l]) out.push(row(A.name, null, l));
  }
  return out;
}

/**
 * refRows are the rows of a multi-valued reference: the complete new set
 * (sortReverse 0, 1, …), or one null row that clears it.
 */
export function refRows(attribute: number, ids: readonly number[]): CmsValue[] {
  if (ids.length === 0) return [row(attribute, null)];
  return ids.map((id, i) => row(attribute, id, 0, i));
}

/**
 * attributeRows are the values of an attribute draft. On create every
 * setting is sent; on update only what changed (before), and the data type
 * never (it is fixed once created: stored values would no longer match).
 */
export function attributeRows(d: AttributeDraft, before?: AttributeDef): CmsValue[] {
  const out = nameRows(d.names, before?.names);
  if (!before) out.push(row(A.dataType, d.dataType));
  const flag = (attribute: number, v: boolean, was: boolean | undefined) => {
    if (was === undefined ? v : v !== was) out.push(row(attribute, v));
  };
  flag(A.multi, d.multi, before?.multi);
  flag(A.langDep, d.langDep, before?.langDep);
  flag(A.required, d.required, before?.required);
  const max = d.multi ? d.maxValues : 0;
  if (before ? max !== before.maxValues : max !== 0) out.push(row(A.maxValues, max === 0 && before ? null : max));
  const targets = isReference(before?.dataType ?? d.dataType) ? d.refTypes : [];
  const wasTargets = before?.refTypes ?? [];
  if (targets.join() !== wasTargets.join() && (before || targets.length > 0)) out.push(...refRows(A.refTypes, targets));
  return out;
}

/** The fields of the dialogs a ProblemDetails can concern. */
export type FormField = "apiIdentifier" | "names" | "dataType" | "refTypes" | "maxValues" | "displayName" | "multi" | "langDep" | "required";

const fieldOfAttribute: Record<number, FormField> = {
  [A.name]: "names", [A.dataType]: "dataType", [A.multi]: "multi", [A.maxValues]: "maxValues",
  [A.refTypes]: "refTypes", [A.langDep]: "langDep", [A.required]: "required", [A.displayName]: "displayName",
  1021: "apiIdentifier",
};

/**
 * fieldOf maps the API's ProblemDetails detail to the field it concerns:
 * an ApiIdentifier message, or "attribute N" of the meta-model. null: the
 * form's top.
 */
export function fieldOf(detail: string | undefined): FormField | null {
  if (!detail) return null;
  const m = /\battribute (\d+)\b/.exec(detail);
  const byAttribute = m ? fieldOfAttribute[Number(m[1])] : undefined;
  if (byAttribute) return byAttribute;
  if (/api ?identifier/i.test(detail)) return "apiIdentifier";
  return null;
}

async function all(branch: string, type: string, signal?: AbortSignal): Promise<CmsObject[]> {
  const out: CmsObject[] = [];
  let next: string | undefined;
  for (let page = 0; page < 20; page++) {
    const { data } = await api.call("management", "GetTypedObjects",
      { branch, type, inherited: true, deleted: false, take: 1000, continue: next }, undefined, { signal });
    out.push(...(data.objects ?? []));
    next = data.continue || undefined;
    if (!next) break;
  }
  return out;
}

/** getMany reads objects by id in batches (GetObjects), in the order asked. */
async function getMany(branch: string, ids: readonly number[], signal?: AbortSignal): Promise<CmsObject[]> {
  const out: CmsObject[] = [];
  for (let i = 0; i < ids.length; i += 200) {
    const part = ids.slice(i, i + 200);
    const { data } = await api.call("management", "GetObjects", { branch, ids: part.join(","), inherited: true }, undefined, { signal });
    out.push(...(data.objects ?? []));
  }
  return out;
}

export interface BranchSchema {
  types: TypeDef[];
  languages: Language[];
}

/** loadSchema reads the branch's types (system ones included) and languages. */
export async function loadSchema(branch: string, preferred: readonly number[], signal?: AbortSignal): Promise<BranchSchema> {
  const [types, langs] = await Promise.all([all(branch, "root", signal), all(branch, String(typeLanguage), signal)]);
  return {
    types: types.map(parseType).filter((t) => !t.deleted),
    languages: langs
      .filter((o) => !o.meta?.deleted)
      .map((o) => ({ id: o.meta?.id ?? 0, name: displayName(o, preferred), code: String(first(o, A.isoCode) ?? "") }))
      .sort((a, b) => a.id - b.id),
  };
}

export interface TypeModel {
  type: TypeDef;
  etag: string | null;
  /** The form the studio adds attributes to: the first detail form, else the create form. */
  form?: number | undefined;
  attributes: AttributeDef[];
}

/** formAttributes is the union of the forms' 5053 lists, in form order, without repeats. */
export function formAttributes(forms: readonly CmsObject[]): number[] {
  const seen = new Set<number>();
  const out: number[] = [];
  for (const f of forms) {
    if (f.meta?.typeRef !== typeForm || f.meta?.deleted) continue;
    for (const id of refs(f, A.formContent)) if (!seen.has(id)) {
      seen.add(id);
      out.push(id);
    }
  }
  return out;
}

/** loadType reads one type, its forms and its attributes. */
export async function loadType(branch: string, id: string, signal?: AbortSignal): Promise<TypeModel> {
  const t = await api.call("management", "GetObject", { branch, id, inherited: true }, undefined, { signal });
  const type = parseType(t.data);
  const formIds = [...(type.createForm !== undefined ? [type.createForm] : []), ...type.detailForms];
  const forms = formIds.length ? await getMany(branch, formIds, signal) : [];
  const attrIds = formAttributes(forms);
  const attrs = attrIds.length ? await getMany(branch, attrIds, signal) : [];
  return {
    type,
    etag: t.etag,
    form: forms.find((f) => f.meta?.id === type.detailForms[0])?.meta?.id ?? type.detailForms[0] ?? type.createForm,
    attributes: attrs.filter((o) => o.meta?.typeRef === typeAttribute && !o.meta?.deleted).map(parseAttribute),
  };
}

const comment = (what: string) => `studio: ${what}`;

/** createType creates a type; its ApiIdentifier is fixed from then on. */
export async function createType(branch: string, d: TypeDraft): Promise<number> {
  const { data } = await api.call("management", "CreateObjects", { branch }, {
    comment: comment("new type"),
    objects: [{ meta: { typeRef: typeRoot, apiIdentifier: d.apiIdentifier.trim() || undefined }, values: nameRows(d.names, undefined) }],
  });
  const id = data.createdObjectIds?.[0];
  if (id === undefined) throw new Error("the API created no type");
  return id;
}

/** updateType writes a type's names (If-Match: its ETag). */
export async function updateType(branch: string, t: TypeDef, d: TypeDraft, etag: string | null): Promise<void> {
  const rows = nameRows(d.names, t.names);
  if (rows.length === 0) return;
  await api.call("management", "UpdateObjects", { branch }, { comment: comment("rename type"), objects: [{ meta: { id: t.id }, values: rows }] },
    etag ? { ifMatch: etag } : {});
}

/** setDisplayName names the attribute whose value names the type's objects (5005); undefined removes it. */
export async function setDisplayName(branch: string, t: TypeDef, attr: number | undefined): Promise<void> {
  await api.call("management", "UpdateObjects", { branch }, {
    comment: comment("display-name attribute"),
    objects: [{ meta: { id: t.id }, values: [row(A.displayName, attr ?? null)] }],
  });
}

/**
 * createAttribute creates an attribute and adds it to the type's form: the
 * form's 5053 list is replaced by the list read plus the new id, If-Match
 * the form's ETag (a concurrent change answers 412, nothing is lost); a type
 * without a form gets one (5002).
 */
export async function createAttribute(branch: string, m: TypeModel, d: AttributeDraft): Promise<number> {
  const { data } = await api.call("management", "CreateObjects", { branch }, {
    comment: comment("new attribute"),
    objects: [{ meta: { typeRef: typeAttribute, apiIdentifier: d.apiIdentifier.trim() || undefined }, values: attributeRows(d) }],
  });
  const id = data.createdObjectIds?.[0];
  if (id === undefined) throw new Error("the API created no attribute");
  await addToForm(branch, m, id);
  return id;
}

async function addToForm(branch: string, m: TypeModel, id: number): Promise<void> {
  if (m.form !== undefined) {
    const f = await api.call("management", "GetObject", { branch, id: String(m.form), inherited: true });
    const list = refs(f.data, A.formContent);
    await api.call("management", "UpdateObjects", { branch }, {
      comment: comment("attribute to form"),
      objects: [{ meta: { id: m.form }, values: refRows(A.formContent, [...list, id]) }],
    }, f.etag ? { ifMatch: f.etag } : {});
    return;
  }
  const typeName = nameIn(m.type.names, [201], m.type.apiIdentifier ?? `#${m.type.id}`);
  const { data } = await api.call("management", "CreateObjects", { branch }, {
    comment: comment("form"),
    objects: [{ meta: { typeRef: typeForm }, values: [row(A.name, `${typeName}`, 201), ...refRows(A.formContent, [id])] }],
  });
  const form = data.createdObjectIds?.[0];
  if (form === undefined) throw new Error("the API created no form");
  await api.call("management", "UpdateObjects", { branch }, {
    comment: comment("form of the type"),
    objects: [{ meta: { id: m.type.id }, values: refRows(A.detailForms, [...m.type.detailForms, form]) }],
  });
}

/** removeFromForms takes an attribute off the type's forms (the definition stays; other types may use it). */
export async function removeFromForms(branch: string, m: TypeModel, id: number): Promise<void> {
  const formIds = [...(m.type.createForm !== undefined ? [m.type.createForm] : []), ...m.type.detailForms];
  for (const f of await getMany(branch, formIds)) {
    const list = refs(f, A.formContent);
    if (!list.includes(id)) continue;
    await api.call("management", "UpdateObjects", { branch }, {
      comment: comment("attribute off form"),
      objects: [{ meta: { id: f.meta?.id }, values: refRows(A.formContent, list.filter((x) => x !== id)) }],
    });
  }
  if (m.type.displayNameAttr === id) await setDisplayName(branch, m.type, undefined);
}

/** updateAttribute writes what changed of an attribute. */
export async function updateAttribute(branch: string, before: AttributeDef, d: AttributeDraft): Promise<void> {
  const rows = attributeRows(d, before);
  if (rows.length === 0) return;
  await api.call("management", "UpdateObjects", { branch }, { comment: comment("change attribute"), objects: [{ meta: { id: before.id }, values: rows }] });
}
