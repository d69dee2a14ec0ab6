// Provenance: where a shown value comes from. On a branch B an object's
// value for (attribute, language, variant) is B's own row ("set here"),
// else the row of the nearest ancestor on B's chain (parent, grandparent …
// up to branch 4) that has one ("inherited from branch X"); a
// language-dependent value missing in language L is shown from L's fallback
// language Y (attribute 2002), found the same way ("fallback from Y"). A
// value of a variant V missing in V (in the language and its fallbacks) is
// shown from the value without variant ("fallback from the value without
// variant"), as pkg/model Fallback looks values up: variants outer,
// languages inner.
import type { CmsObject } from "../api/generated/management";
import { keyOf, rowsByKey } from "./object";

/** One branch's local rows (GetObject inherited=false), nearest first. */
export interface BranchRows {
  branch: number;
  /** The object as stored on that branch; null: nothing stored there (404). */
  object: CmsObject | null;
}

type Stored = { kind: "local" } | { kind: "inherited"; branch: number };
type InVariant = Stored | { kind: "fallback"; language: number; from: Stored };

export type Source =
  | InVariant
  | { kind: "base"; from: InVariant }
  | { kind: "none" };

/** Provenance answers for one object on one branch. */
export interface Provenance {
  /** Where the value of (attr, lang, variant) comes from. */
  source(attr: number, lang: number, variant: number, languageDependent: boolean): Source;
}

/** The max depth of a language fallback chain (pkg/model MaxFallbackDepth). */
export const maxFallbackDepth = 16;

/**
 * provenance builds the lookup from the chain's local rows (chain[0] is the
 * branch itself) and each language's fallback (0 or absent: none).
 */
export function provenance(chain: readonly BranchRows[], fallbacks: ReadonlyMap<number, number>): Provenance {
  const maps = chain.map((c) => ({ branch: c.branch, rows: rowsByKey(c.object) }));
  const direct = (attr: number, lang: number, variant: number): Stored | { kind: "none" } => {
    const k = keyOf(attr, lang, variant);
    for (let i = 0; i < maps.length; i++) {
      const m = maps[i]!;
      if (m.rows.has(k)) return i === 0 ? { kind: "local" } : { kind: "inherited", branch: m.branch };
    }
    return { kind: "none" };
  };
  const inVariant = (attr: number, lang: number, variant: number, languageDependent: boolean): InVariant | { kind: "none" } => {
    const own = direct(attr, lang, variant);
    if (own.kind !== "none" || !languageDependent) return own;
    const seen = new Set<number>([lang]);
    for (let l = fallbacks.get(lang) ?? 0; l !== 0 && !seen.has(l) && seen.size <= maxFallbackDepth; l = fallbacks.get(l) ?? 0) {
      seen.add(l);
      const s = direct(attr, l, variant);
      if (s.kind === "local" || s.kind === "inherited") return { kind: "fallback", language: l, from: s };
    }
    return { kind: "none" };
  };
  return {
    source(attr, lang, variant, languageDependent) {
      const s = inVariant(attr, lang, variant, languageDependent);
      if (s.kind !== "none" || variant === 0) return s;
      const base = inVariant(attr, lang, 0, languageDependent);
      return base.kind === "none" ? base : { kind: "base", from: base };
    },
  };
}

/** chainOf is the branch chain of b (b, its parent, … the root), cycles cut. */
export function chainOf(b: number, parents: ReadonlyMap<number, number | undefined>, max = 64): number[] {
  const out: number[] = [];
  for (let cur: number | undefined = b; cur !== undefined && !out.includes(cur) && out.length < max; cur = parents.get(cur)) {
    out.push(cur);
  }
  return out;
}
