// Keyboard shortcuts of the whole studio, in one place: a view registers
// what a key does while it is shown (useShortcut), the help dialog lists
// every registered shortcut (press ?). Keys typed into a text control are
// left to it, except the ones marked global (Ctrl/⌘+S saves everywhere).
import { useEffect } from "preact/hooks";
import { createStore } from "../store";

export interface Shortcut {
  /** "mod+s", "/", "?", "escape", "g m": mod is Ctrl, or ⌘ on a Mac. */
  keys: string;
  /** What it does, in the UI's language (shown in the help). */
  label: string | (() => string);
  run: (e: KeyboardEvent) => void;
  /** Also while typing in a field. */
  global?: boolean;
}

export const shortcuts = createStore<Shortcut[]>([]);

/** addShortcut registers s for as long as the studio runs. */
export function addShortcut(s: Shortcut) {
  shortcuts.update((all) => [...all, s]);
}

/** labelOf is a shortcut's label in the current language. */
export function labelOf(s: Shortcut): string {
  return typeof s.label === "function" ? s.label() : s.label;
}

/** useShortcut registers s while the component is shown. */
export function useShortcut(s: Shortcut, deps: unknown[] = []) {
  useEffect(() => {
    shortcuts.update((all) => [...all, s]);
    return () => shortcuts.update((all) => all.filter((x) => x !== s));
  }, deps);
}

const isMac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform);

/** keyOf names a key event like Shortcut.keys does ("mod+s", "shift+?" is "?"). */
export function keyOf(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey">, mac = isMac): string {
  const mod = mac ? e.metaKey : e.ctrlKey;
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key.toLowerCase();
  return (mod ? "mod+" : "") + (e.altKey ? "alt+" : "") + key;
}

/** display shows a shortcut's keys for people: "Ctrl+S" or "⌘S". */
export function display(keys: string, mac = isMac, then = "then"): string {
  return keys
    .split(" ")
    .map((k) =>
      k
        .split("+")
        .map((p) => (p === "mod" ? (mac ? "⌘" : "Ctrl") : p.length === 1 ? p.toUpperCase() : p[0]!.toUpperCase() + p.slice(1)))
        .join(mac ? "" : "+"),
    )
    .join(` ${then} `);
}

function typing(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName);
}

let pending = "";
let pendingAt = 0;

/** dispatch runs the shortcut of a key event (the newest registration wins). */
export function dispatch(e: KeyboardEvent) {
  const k = keyOf(e);
  const now = Date.now();
  const seq = pending && now - pendingAt < 1000 ? `${pending} ${k}` : k;
  const all = shortcuts.get();
  for (const candidate of [seq, k]) {
    for (let i = all.length - 1; i >= 0; i--) {
      const s = all[i]!;
      if (s.keys !== candidate) continue;
      if (typing(e.target) && !s.global) continue;
      e.preventDefault();
      pending = "";
      s.run(e);
      return;
    }
  }
  // The first key of a two-key sequence ("g m") waits for the second.
  if (!typing(e.target) && all.some((s) => s.keys.startsWith(k + " "))) {
    pending = k;
    pendingAt = now;
  } else pending = "";
}

if (typeof window !== "undefined") window.addEventListener("keydown", dispatch);
