// Numbers and dates as the editor types them, in the studio's language:
// German 1.234,5 and English 1,234.5; dates through the browser's date and
// date-time inputs (local time), stored as the API wants them (RFC 3339
// UTC, yyyy-mm-dd).

export interface Separators {
  group: string;
  decimal: string;
}

export function separators(locale: string): Separators {
  const parts = new Intl.NumberFormat(locale).formatToParts(12345.6);
  return {
    group: parts.find((p) => p.type === "group")?.value ?? ",",
    decimal: parts.find((p) => p.type === "decimal")?.value ?? ".",
  };
}

/** formatNumberInput shows a stored number for editing (grouped, all digits kept). */
export function formatNumberInput(v: unknown, locale: string): string {
  if (typeof v !== "number" || !Number.isFinite(v)) return v === undefined || v === null ? "" : String(v);
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 20, useGrouping: true }).format(v);
}

/**
 * parseNumberInput reads what the editor typed: "" is no value (null),
 * text that is not a number in the locale's notation is NaN.
 */
export function parseNumberInput(text: string, locale: string): number | null {
  const t = text.trim().replace(/[\s\u00a0\u202f]/g, "");
  if (t === "") return null;
  const { group, decimal } = separators(locale);
  const grouped = group === "." ? /^[-+]?\d{1,3}(\.\d{3})+(,\d+)?$/ : /^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$/;
  const plain = decimal === "," ? /^[-+]?\d+(,\d+)?$/ : /^[-+]?\d+(\.\d+)?$/;
  const sci = /^[-+]?\d+([.,]\d+)?[eE][-+]?\d+$/;
  let norm: string;
  if (grouped.test(t) || plain.test(t)) norm = t.split(group).join("").replace(decimal, ".");
  else if (sci.test(t)) norm = t.replace(",", ".");
  else return NaN;
  const n = Number(norm);
  return Number.isFinite(n) ? n : NaN;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** toLocalInput turns an RFC 3339 time into a datetime-local input's value (local time). */
export function toLocalInput(iso: unknown): string {
  if (typeof iso !== "string" || iso === "") return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** fromLocalInput turns a datetime-local value into RFC 3339 UTC ("" = no value). */
export function fromLocalInput(s: string): string | null {
  if (s === "") return null;
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return null;
  return d.toISOString().replace(/\.000Z$/, "Z");
}

/** toDateInput is a stored date (yyyy-mm-dd, or a date-time) as a date input's value. */
export function toDateInput(v: unknown): string {
  if (typeof v !== "string") return "";
  const m = /^(\d{4}-\d{2}-\d{2})/.exec(v);
  return m ? m[1]! : "";
}
