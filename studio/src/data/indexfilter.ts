// A full-text search and the filter builder's conditions together: the
// builder writes the Delivery syntax (ApiIdentifiers), the Index takes
// value filters by attribute id and language, so the conditions are
// translated with the attributes' ids and language dependence (one
// Management request) into the one filter condition the Index search and
// its count carry.
import { ApiError } from "../api/client";
import type { ObjectFilterCondition, ObjectValueFilter } from "../api/generated/index";
import type { CmsObject } from "../api/generated/management";
import { api } from "../auth/session";
import type { Condition } from "./list";
import { A, typeAttribute } from "./model";

/** What the translation knows of an attribute the filter names. */
export interface FilterAttribute {
  id: number;
  languageDependent: boolean;
}

/**
 * IndexFilterError: a condition the Index cannot take as the builder
 * wrote it (shown at the builder, in the studio's words, naming it).
 */
export class IndexFilterError extends Error {
  constructor(
    /** unknown: no attribute of that name; contains: the ":" operator; meta: a meta field other than meta.id = and meta.lastModified >=; syntax: not the builder's && conditions. */
    readonly reason: "unknown" | "contains" | "meta" | "syntax",
    readonly field: string,
  ) {
    super(`${reason}: ${field}`);
    this.name = "IndexFilterError";
  }
}

/** The Index's compare operators (FilterCompareOperator) of the builder's. */
const compareOperators: Record<string, number> = { "=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5 };

/** isDisplayName: Delivery's displayName stands for the type's display-name attribute (A.displayName, 5005), else the name 1000. */
function isDisplayName(field: string): boolean {
  return field.toLowerCase() === "displayname";
}

/** attributeRefs are the attributes conditions name (ApiIdentifiers, or the display-name attribute's id), once each. */
export function attributeRefs(conds: readonly Condition[], nameAttr: number): string[] {
  const out: string[] = [];
  for (const c of conds) {
    if (c.field.startsWith("meta.")) continue;
    const ref = isDisplayName(c.field) ? String(nameAttr) : c.field;
    if (!out.some((x) => x.toLowerCase() === ref.toLowerCase())) out.push(ref);
  }
  return out;
}

/**
 * indexCondition is the Index filter condition of a search with filter
 * conditions: the full text, the type, the deleted filter and the display
 * names in language, every attribute condition a value filter of the
 * attribute's id in language when it is language dependent (0 when not),
 * meta.id = as objectIds and meta.lastModified >= as modifiedSince.
 * attrs holds the attributes by lower-cased reference (attributeRefs).
 */
export function indexCondition(
  base: { fullText: string; typeId: number; deleted?: boolean | undefined; language: number },
  conds: readonly Condition[],
  attrs: ReadonlyMap<string, FilterAttribute>,
  nameAttr: number,
): ObjectFilterCondition {
  const out: ObjectFilterCondition = { objectTypeIds: [base.typeId], fullText: base.fullText, uiLanguage: base.language };
  if (base.deleted !== undefined) out.deleted = base.deleted;
  const filters: ObjectValueFilter[] = [];
  for (const c of conds) {
    const field = c.field.trim();
    const meta = field.toLowerCase();
    if (meta === "meta.id" && c.op === "=" && /^\d+$/.test(c.value) && !out.objectIds) {
      out.objectIds = [Number(c.value)];
      continue;
    }
    if ((meta === "meta.lastmodified" || meta === "meta.modified") && c.op === ">=" && !out.modifiedSince) {
      out.modifiedSince = c.value;
      continue;
    }
    if (meta.startsWith("meta.")) throw new IndexFilterError("meta", field);
    const op = compareOperators[c.op];
    if (op === undefined) throw new IndexFilterError("contains", field);
    const a = attrs.get((isDisplayName(field) ? String(nameAttr) : field).toLowerCase());
    if (!a) throw new IndexFilterError("unknown", field);
    filters.push({ attrId: a.id, langId: a.languageDependent ? base.language : 0, variantId: 0, compareOperator: op, value: c.value });
  }
  if (filters.length) out.filters = filters;
  return out;
}

/**
 * filterAttributes reads the attributes refs name in one Management
 * request (GetObjects with the references as ids, inherited values, only
 * attribute 1017); an object that is not an attribute is left out, a
 * name no object has is IndexFilterError "unknown".
 */
export async function filterAttributes(branch: string, refs: readonly string[]): Promise<Map<string, FilterAttribute>> {
  const out = new Map<string, FilterAttribute>();
  if (refs.length === 0) return out;
  let objs: CmsObject[];
  try {
    const { data } = await api.call("management", "GetObjects",
      { branch, ids: refs.join(","), inherited: true, attributes: String(A.langDep) });
    objs = data.objects ?? [];
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
    const detail = e.problem.detail ?? "";
    throw new IndexFilterError("unknown", refs.find((r) => detail.includes(`"${r}"`)) ?? refs.join(", "));
  }
  for (const o of objs) {
    const id = o.meta?.id;
    if (id === undefined || o.meta?.typeRef !== typeAttribute) continue;
    const dep = (o.values ?? []).some((v) => v.attribute === A.langDep && v.value === true);
    const a = { id, languageDependent: dep };
    out.set(String(id), a);
    if (o.meta?.apiIdentifier) out.set(o.meta.apiIdentifier.toLowerCase(), a);
  }
  return out;
}

/**
 * searchCondition is the Index condition of a list search: with filter
 * conditions it reads their attributes first (filterAttributes) and
 * translates them (indexCondition).
 */
export async function searchCondition(
  branch: string,
  base: { fullText: string; typeId: number; deleted?: boolean | undefined; language: number },
  /** The builder's conditions (parseExpression), null when the filter is not of the builder's syntax. */
  conds: readonly Condition[] | null,
  filter: string,
  nameAttr: number,
): Promise<ObjectFilterCondition> {
  if (conds === null) throw new IndexFilterError("syntax", filter);
  const attrs = conds.length ? await filterAttributes(branch, attributeRefs(conds, nameAttr)) : new Map<string, FilterAttribute>();
  return indexCondition(base, conds, attrs, nameAttr);
}
