// Reading values of Management objects (CmsObject): one row per attribute,
// language, variant and position.
import type { CmsObject, CmsValue } from "../api/generated/management";

export const attr = { name: 1000, dataType: 1001, branchParent: 4000 } as const;
export const lang = { none: 0, en: 201, de: 202 } as const;

/** values are the rows of one attribute, optionally of one language and variant. */
export function values(o: CmsObject, attribute: number, language?: number, variant = 0): CmsValue[] {
  return (o.values ?? []).filter(
    (v) =>
      v.attribute === attribute &&
      (language === undefined || (v.language ?? 0) === language) &&
      (v.variant ?? 0) === variant,
  );
}

export function value(o: CmsObject, attribute: number, language?: number): unknown {
  return values(o, attribute, language)[0]?.value;
}

/**
 * displayName is the object's name in the preferred language, else in any
 * language, else "#id".
 */
export function displayName(o: CmsObject, preferred: readonly number[] = [lang.en]): string {
  for (const l of [...preferred, lang.none]) {
    const v = value(o, attr.name, l);
    if (typeof v === "string" && v !== "") return v;
  }
  const any = values(o, attr.name).find((v) => typeof v.value === "string" && v.value !== "");
  if (any) return String(any.value);
  return `#${o.meta?.id ?? "?"}`;
}
