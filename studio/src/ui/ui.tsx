// The design system: the few components every view is made of (button,
// field, dialog, toast, pane, skeleton, problem). Spacing, type and colour
// are tokens in ui.css; light and dark follow the system setting.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { ApiError, OfflineError } from "../api/client";
import { messages } from "../i18n/i18n";
import { createStore, useStore } from "../store";
import { initials } from "./avatar";
import "./ui.css";

const m = messages({
  en: { close: "Close", offline: "No connection to the server. Your changes are kept in this browser.", retryIn: "Try again in {s} s." },
  de: { close: "Schließen", offline: "Keine Verbindung zum Server. Ihre Änderungen bleiben in diesem Browser erhalten.", retryIn: "In {s} s erneut versuchen." },
});

type ButtonProps = JSX.HTMLAttributes<HTMLButtonElement> & {
  variant?: "primary" | "secondary" | "danger" | "ghost";
  type?: "button" | "submit";
  disabled?: boolean;
  /** The id of the form a submit button outside it submits (a dialog's footer). */
  form?: string;
};

export function Button({ variant = "secondary", type = "button", class: cls, ...rest }: ButtonProps) {
  return <button type={type} class={`btn btn-${variant} ${cls ?? ""}`} {...rest} />;
}

export interface FieldProps {
  label: string;
  /** The id of the control the label names. */
  for: string;
  error?: string | undefined;
  hint?: ComponentChildren;
  children: ComponentChildren;
}

/** Field is a label, its control, and the API's message where it belongs. */
export function Field({ label, for: id, error, hint, children }: FieldProps) {
  return (
    <div class={`field ${error ? "field-invalid" : ""}`}>
      <label for={id}>{label}</label>
      {children}
      {hint && <div class="field-hint">{hint}</div>}
      {error && (
        <div class="field-error" id={`${id}-error`} role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

/** Dialog is modal: it traps the focus and closes on Escape. */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; footer?: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-label={props.title}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
      onKeyDown={(e) => trapTab(e, ref.current)}
    >
      <header class="dialog-head">
        <h2>{props.title}</h2>
        <Button variant="ghost" aria-label={m("close")} onClick={props.onClose}>
          ×
        </Button>
      </header>
      <div class="dialog-body">{props.children}</div>
      {props.footer && <footer class="dialog-foot">{props.footer}</footer>}
    </dialog>
  );
}

const focusable = "a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex='-1'])";

/** trapTab keeps Tab and Shift+Tab inside the dialog: past the last control to the first, and back. */
function trapTab(e: KeyboardEvent, d: HTMLElement | null) {
  if (e.key !== "Tab" || !d) return;
  const all = [...d.querySelectorAll<HTMLElement>(focusable)].filter((el) => el.offsetParent !== null || el === document.activeElement);
  const firstEl = all[0];
  const lastEl = all[all.length - 1];
  if (!firstEl || !lastEl) return;
  const active = document.activeElement;
  if (e.shiftKey && (active === firstEl || !d.contains(active))) {
    e.preventDefault();
    lastEl.focus();
  } else if (!e.shiftKey && (active === lastEl || !d.contains(active))) {
    e.preventDefault();
    firstEl.focus();
  }
}

/** Lock is the padlock icon of what cannot be changed; the words beside it say why. */
export function Lock() {
  return (
    <svg class="icon-lock" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false">
      <path fill="currentColor" d="M4 7V5a4 4 0 1 1 8 0v2h.5A1.5 1.5 0 0 1 14 8.5v5a1.5 1.5 0 0 1-1.5 1.5h-9A1.5 1.5 0 0 1 2 13.5v-5A1.5 1.5 0 0 1 3.5 7H4Zm1.5 0h5V5a2.5 2.5 0 0 0-5 0v2Z" />
    </svg>
  );
}

/** showProblem brings the first message of a form into view and focuses the control it concerns. */
export function showProblem(form: HTMLElement | null) {
  if (!form) return;
  const invalid = form.querySelector<HTMLElement>("[aria-invalid=true]");
  const msg = form.querySelector<HTMLElement>(".field-error, .problem");
  (invalid ?? msg)?.scrollIntoView({ block: "center" });
  invalid?.focus();
}

/** Pane is a column of the work area with a sticky header. */
export function Pane(props: { title: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren; class?: string; label?: string }) {
  return (
    <section class={`pane ${props.class ?? ""}`} aria-label={props.label}>
      <header class="pane-head">
        <h1 class="pane-title">{props.title}</h1>
        <div class="pane-actions">{props.actions}</div>
      </header>
      <div class="pane-body">{props.children}</div>
    </section>
  );
}

export function Skeleton(props: { lines?: number }) {
  return (
    <div class="skeleton" aria-hidden="true">
      {Array.from({ length: props.lines ?? 3 }, (_, i) => (
        <div key={i} class="skeleton-line" />
      ))}
    </div>
  );
}

/** problemText is an error in words: the API's detail, offline, or the message. */
export function problemText(e: unknown): string {
  if (e instanceof OfflineError) return m("offline");
  if (e instanceof ApiError) {
    const text = e.problem.detail || e.problem.title || e.message;
    return e.retryAfter ? `${text} ${m("retryIn", { s: e.retryAfter })}` : text;
  }
  return e instanceof Error ? e.message : String(e);
}

/** Problem shows an error where it belongs. */
export function Problem(props: { error: unknown }) {
  return (
    <div class="problem" role="alert">
      {problemText(props.error)}
    </div>
  );
}

export interface Toast {
  id: number;
  text: string;
  kind: "info" | "error";
}

export const toasts = createStore<Toast[]>([]);
let toastSeq = 0;

/**
 * toast shows a short message for a few seconds (errors longer). The same
 * message again replaces the one shown (its time starts over) rather than
 * stacking copies over the page.
 */
export function toast(text: string, kind: Toast["kind"] = "info") {
  const id = ++toastSeq;
  toasts.update((ts) => [...ts.filter((t) => t.text !== text || t.kind !== kind).slice(-3), { id, text, kind }]);
  setTimeout(() => toasts.update((ts) => ts.filter((t) => t.id !== id)), kind === "error" ? 8000 : 4000);
}

export function Toasts() {
  const ts = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {ts.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

/** Avatar is a person's initials in a circle, beside their name (which says it: the avatar is hidden from screen readers). */
export function Avatar(props: { name: string; title?: string | undefined }) {
  return <span class="avatar" aria-hidden="true" title={props.title}>{initials(props.name)}</span>;
}
