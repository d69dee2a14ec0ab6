// The provenance badge of one shown value, and how values read in words.
import type { Source } from "../../data/provenance";
import { formatDateTime, formatNumber, messages } from "../../i18n/i18n";
import type { AttributeInfo } from "./fields/registry";

export const bm = messages({
  en: {
    local: "Set here", inherited: "Inherited from {branch}", fallback: "Fallback from {language}", none: "No value",
    base: "Fallback from the value without variant",
    edited: "Changed, not saved", toInherit: "Back to inherited, not saved", empty: "(empty)", yes: "Yes", no: "No",
    source: "Source of the value: {what}",
  },
  de: {
    local: "Hier gesetzt", inherited: "Geerbt von {branch}", fallback: "Ersatz aus {language}", none: "Kein Wert",
    base: "Ersatz aus dem Wert ohne Variante",
    edited: "Geändert, nicht gespeichert", toInherit: "Zurück zum geerbten Wert, nicht gespeichert", empty: "(leer)", yes: "Ja", no: "Nein",
    source: "Herkunft des Werts: {what}",
  },
});

export type BadgeState = Source | { kind: "edited" } | { kind: "toInherit" };

export function badgeText(s: BadgeState, branchName: (id: number) => string, languageName: (id: number) => string): string {
  switch (s.kind) {
    case "local":
      return bm("local");
    case "inherited":
      return bm("inherited", { branch: branchName(s.branch) });
    case "fallback":
      return bm("fallback", { language: languageName(s.language) });
    case "base":
      return bm("base");
    case "edited":
      return bm("edited");
    case "toInherit":
      return bm("toInherit");
    default:
      return bm("none");
  }
}

export function Badge(props: { state: BadgeState; text: string }) {
  return (
    <span class={`badge badge-${props.state.kind}`} data-source={props.state.kind}>
      <span class="visually-hidden">{bm("source", { what: "" })}</span>
      {props.text}
    </span>
  );
}

/** showValue is a value in words for the conflict view and hints. */
export function showValue(v: unknown, a: AttributeInfo | undefined): string {
  if (v === undefined || v === null || v === "") return bm("empty");
  if (Array.isArray(v)) return v.map((x) => showValue(x, a)).join(", ");
  if (typeof v === "boolean") return v ? bm("yes") : bm("no");
  if (typeof v === "number") return a?.dataType === "ObjRef" || a?.dataType.startsWith("BinRef") ? `#${v}` : formatNumber(v);
  if (typeof v === "string" && a?.dataType === "DateTime") return formatDateTime(v);
  return String(v);
}
