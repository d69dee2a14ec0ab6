// The studio speaks English and German. Each feature declares its own
// messages with messages({en, de}); German must have every English key
// (the type checker says which is missing). The chosen language is a
// preference kept in local storage (no secret), else the browser's.
import { createStore } from "../store";

export type Locale = "en" | "de";
export const locales: readonly Locale[] = ["en", "de"];

const stored = safeGet("cms.studio.locale");
export const locale = createStore<Locale>(
  stored === "en" || stored === "de" ? stored : navigatorLocale(),
);
locale.subscribe((l) => {
  safeSet("cms.studio.locale", l);
  document.documentElement.lang = l;
});

function navigatorLocale(): Locale {
  const langs = typeof navigator === "undefined" ? [] : navigator.languages ?? [navigator.language];
  return langs.some((l) => l?.toLowerCase().startsWith("de")) ? "de" : "en";
}

export type Catalog = Record<string, string>;

/**
 * messages returns the translator of one feature's catalog: m("key", {n: 3})
 * fills {n} in the current language's text.
 */
export function messages<E extends Catalog>(c: { en: E; de: { [K in keyof E]: string } }) {
  return (key: keyof E & string, vars?: Record<string, string | number>): string => {
    const text = (locale.get() === "de" ? c.de[key] : c.en[key]) ?? key;
    return vars ? text.replace(/\{(\w+)\}/g, (_, k: string) => String(vars[k] ?? `{${k}}`)) : text;
  };
}

/** formatNumber and formatDate follow the studio's language. */
export function formatNumber(n: number): string {
  return new Intl.NumberFormat(locale.get()).format(n);
}

export function formatDateTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return new Intl.DateTimeFormat(locale.get(), { dateStyle: "medium", timeStyle: "short" }).format(d);
}

function safeGet(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function safeSet(key: string, v: string) {
  try {
    localStorage.setItem(key, v);
  } catch {
    /* private mode: the choice lasts for this page */
  }
}
