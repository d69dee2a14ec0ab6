// Variants as the object editor shows them. An attribute with a variant
// axis (attribute 1002, a reference to a type) may hold values per variant
// besides its value without variant (variant 0); the variants are the
// objects of the axis type (pkg/content accepts a variant only for an
// attribute with an axis; Delivery, the templates and the index look a
// value up per variant, then without: pkg/model Fallback). The editor
// offers the variants the type's attributes declare, by name, and shows a
// chosen variant's values beside the values without variant.
import type { CmsObject } from "../../api/generated/management";
import { displayName } from "../../data/values";
import type { AttributeInfo } from "./fields/registry";

export interface Variant {
  id: number;
  name: string;
  /** The axis (a type) the variant is an object of, and its name. */
  axis: number;
  axisName: string;
}

/**
 * variantsOf lists the variants of the axes, in the axes' order, each axis
 * by name; axisObjs are the axis types, members[i] the objects of axes[i].
 */
export function variantsOf(axes: readonly number[], axisObjs: readonly CmsObject[], members: readonly (readonly CmsObject[])[],
  preferred: readonly number[]): Variant[] {
  const axisName = new Map(axisObjs.map((o) => [o.meta?.id ?? 0, displayName(o, preferred)]));
  return axes.flatMap((axis, i) =>
    (members[i] ?? [])
      .filter((o) => (o.meta?.id ?? 0) > 0 && !o.meta?.deleted)
      .map((o) => ({ id: o.meta?.id ?? 0, name: displayName(o, preferred), axis, axisName: axisName.get(axis) ?? `#${axis}` }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id));
}

/** hasVariant reports whether attribute a may hold values of variant v (its axis is v's). */
export function hasVariant(a: AttributeInfo, v: Variant | undefined): boolean {
  return !!v && a.variantAxis > 0 && a.variantAxis === v.axis;
}

/**
 * chosenVariant is the variant the address names (?variant=id), if the
 * type declares it; ids of values stored for a variant no axis declares
 * (written before an axis changed) are listed too, by id.
 */
export function chosenVariant(variants: readonly Variant[], query: string | undefined): Variant | undefined {
  const id = Number(query ?? 0);
  return Number.isInteger(id) && id > 0 ? variants.find((v) => v.id === id) : undefined;
}

/** undeclared are the variant ids the object stores values of that no axis of its type declares. */
export function undeclared(variants: readonly Variant[], o: CmsObject | null | undefined, attributes: readonly AttributeInfo[]): Variant[] {
  const known = new Set(variants.map((v) => v.id));
  const out = new Map<number, Variant>();
  for (const v of o?.values ?? []) {
    const id = v.variant ?? 0;
    if (id === 0 || known.has(id) || out.has(id)) continue;
    const axis = attributes.find((a) => a.id === v.attribute)?.variantAxis ?? 0;
    out.set(id, { id, name: `#${id}`, axis, axisName: "" });
  }
  return [...out.values()].sort((a, b) => a.id - b.id);
}
