// The rich-text input of XmlRef.SimpleHtml values, loaded on demand
// (richtext.tsx registers it lazily, so ProseMirror is not in the first
// load). ProseMirror edits a document of the schema in richtext-schema.ts;
// every change is written as XHTML with a <div> root through the
// sanitizer (xhtml.ts), so the value is what the API keeps and renders.
// No markup is ever parsed into the live page: a stored value is read by
// DOMParser (an inert document), sanitized, and built with createElement.
import { baseKeymap, chainCommands, exitCode, lift, setBlockType, toggleMark, wrapIn } from "prosemirror-commands";
import { history, redo, undo } from "prosemirror-history";
import { keymap } from "prosemirror-keymap";
import { DOMParser as PMParser, DOMSerializer, type MarkType, type Node as PMNode } from "prosemirror-model";
import { liftListItem, sinkListItem, splitListItem, wrapInList } from "prosemirror-schema-list";
import { type Command, EditorState, type Transaction } from "prosemirror-state";
import { EditorView } from "prosemirror-view";
import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { Button, Dialog, Field } from "../../../ui/ui";
import { m } from "./richtext-messages";
import type { FieldProps } from "./registry";
import { editable, headingLevels, schema } from "./richtext-schema";
import { fromDOM, type HNode, parseStored, toDOM, toXHTML, validURL } from "./xhtml";

const mac = typeof navigator !== "undefined" && /Mac|iP(hone|ad)/.test(navigator.platform);
const mod = mac ? "⌘" : "Ctrl+";

/** docOf builds the editor's document of a stored value. */
function docOf(value: unknown): PMNode {
  const box = document.createElement("div");
  toDOM(document, parseStored(value), box);
  return PMParser.fromSchema(schema).parse(box);
}

/** valueOf writes the document as the stored value (undefined: empty). */
function valueOf(doc: PMNode): string | undefined {
  const frag = DOMSerializer.fromSchema(schema).serializeFragment(doc.content, { document });
  return toXHTML(fromDOM(frag));
}

function markActive(state: EditorState, type: MarkType): boolean {
  const { from, $from, to, empty } = state.selection;
  if (empty) return !!type.isInSet(state.storedMarks || $from.marks());
  return state.doc.rangeHasMark(from, to, type);
}

function linkAt(state: EditorState): string | undefined {
  const { $from } = state.selection;
  const mk = schema.marks.link.isInSet($from.marks()) ?? schema.marks.link.isInSet($from.nodeAfter?.marks ?? []);
  return mk ? (mk.attrs.href as string) : undefined;
}

/** blockKind is the text style of the selection's block: "p", "h2", … */
function blockKind(state: EditorState): string {
  const n = state.selection.$from.parent;
  return n.type === schema.nodes.heading ? `h${n.attrs.level as number}` : "p";
}

function inList(state: EditorState, type: typeof schema.nodes.bullet_list): boolean {
  const { $from } = state.selection;
  for (let d = $from.depth; d > 0; d--) {
    const t = $from.node(d).type;
    if (t === schema.nodes.bullet_list || t === schema.nodes.ordered_list) return t === type;
  }
  return false;
}

function toggleList(type: typeof schema.nodes.bullet_list): Command {
  return (state, dispatch) => (inList(state, type) ? liftListItem(schema.nodes.list_item)(state, dispatch) : wrapInList(type)(state, dispatch));
}

function inQuote(state: EditorState): boolean {
  const { $from } = state.selection;
  for (let d = $from.depth; d > 0; d--) if ($from.node(d).type === schema.nodes.blockquote) return true;
  return false;
}

const toggleQuote: Command = (state, dispatch) => (inQuote(state) ? lift(state, dispatch) : wrapIn(schema.nodes.blockquote)(state, dispatch));

function setKind(kind: string): Command {
  if (kind === "p") return setBlockType(schema.nodes.paragraph);
  return setBlockType(schema.nodes.heading, { level: Number(kind.slice(1)) });
}

const hardBreak: Command = chainCommands(exitCode, (state, dispatch) => {
  dispatch?.(state.tr.replaceSelectionWith(schema.nodes.hard_break.create()).scrollIntoView());
  return true;
});

export function RichTextField(props: FieldProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const emitted = useRef<unknown>(props.value);
  const onChange = useRef(props.onChange);
  onChange.current = props.onChange;
  const [, setTick] = useState(0);
  const [linkOpen, setLinkOpen] = useState(false);
  const [lossy, setLossy] = useState(false);

  const openLink = () => setLinkOpen(true);

  useEffect(() => {
    if (!host.current) return;
    const keys = keymap({
      "Mod-b": toggleMark(schema.marks.strong),
      "Mod-i": toggleMark(schema.marks.em),
      "Mod-`": toggleMark(schema.marks.code),
      "Mod-k": () => (openLink(), true),
      "Mod-z": undo,
      "Shift-Mod-z": redo,
      "Mod-y": redo,
      "Mod-Alt-0": setKind("p"),
      ...Object.fromEntries(headingLevels.map((l) => [`Mod-Alt-${l}`, setKind(`h${l}`)])),
      "Shift-Mod-8": toggleList(schema.nodes.bullet_list),
      "Shift-Mod-7": toggleList(schema.nodes.ordered_list),
      "Shift-Mod-9": toggleQuote,
      Enter: splitListItem(schema.nodes.list_item),
      "Shift-Enter": hardBreak,
      "Mod-Enter": hardBreak,
      // Tab indents a list item; elsewhere it moves the focus on, as everywhere.
      Tab: sinkListItem(schema.nodes.list_item),
      "Shift-Tab": liftListItem(schema.nodes.list_item),
    });
    const doc = docOf(props.value);
    setLossy(!editable(parseStored(props.value)));
    const v = new EditorView(host.current, {
      state: EditorState.create({ doc, plugins: [history(), keys, keymap(baseKeymap)] }),
      attributes: attrs(props),
      editable: () => !props.disabled,
      dispatchTransaction(tr: Transaction) {
        const next = v.state.apply(tr);
        v.updateState(next);
        if (tr.docChanged) {
          const val = valueOf(next.doc);
          if (val !== emitted.current) {
            emitted.current = val;
            onChange.current(val);
          }
        }
        setTick((n) => n + 1);
      },
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
  }, []);

  useEffect(() => {
    view.current?.setProps({ attributes: attrs(props), editable: () => !props.disabled });
  }, [props.id, props.disabled, props.label, props.describedBy, props.invalid]);
  // A value from outside (another language, a reload, discarding edits)
  // replaces the document. A layout effect: it runs before the next input
  // event, so the echo of what this editor emitted is never mistaken for
  // an outside value (a passive effect runs after paint, when the editor
  // may have emitted a newer value: it would reset the text under the cursor).
  useLayoutEffect(() => {
    const v = view.current;
    if (!v) return;
    if (props.value !== emitted.current) {
      emitted.current = props.value;
      const doc = docOf(props.value);
      setLossy(!editable(parseStored(props.value)));
      v.updateState(EditorState.create({ doc, plugins: v.state.plugins }));
      setTick((n) => n + 1);
    }
  }, [props.value]);

  const run = (cmd: Command) => () => {
    const v = view.current;
    if (!v) return;
    cmd(v.state, v.dispatch, v);
    v.focus();
  };
  const st = view.current?.state;
  const kind = st ? blockKind(st) : "p";
  const can = (cmd: Command) => (st ? cmd(st) : false);
  const off = !!props.disabled;

  return (
    <div class={`rt ${props.invalid ? "rt-invalid" : ""} ${props.disabled ? "rt-disabled" : ""}`}>
      <Toolbar label={m("toolbar", { field: props.label })} disabled={!!props.disabled}>
        <select class="input rt-kind" aria-label={m("textStyle")} value={kind} disabled={props.disabled}
          onChange={(e) => run(setKind(e.currentTarget.value))()}>
          <option value="p">{m("paragraph")}</option>
          {headingLevels.map((l) => (
            <option key={l} value={`h${l}`}>{m("heading", { n: l })}</option>
          ))}
        </select>
        <span class="rt-sep" aria-hidden="true" />
        <Tool label={m("bold")} disabled={off} keys={`${mod}B`} pressed={!!st && markActive(st, schema.marks.strong)} onClick={run(toggleMark(schema.marks.strong))}><Icon d="M7 5h6a3.5 3.5 0 0 1 0 7H7zM7 12h7a3.5 3.5 0 0 1 0 7H7z" /></Tool>
        <Tool label={m("italic")} disabled={off} keys={`${mod}I`} pressed={!!st && markActive(st, schema.marks.em)} onClick={run(toggleMark(schema.marks.em))}><Icon d="M10 5h8M6 19h8M14 5l-4 14" /></Tool>
        <Tool label={m("code")} disabled={off} keys={`${mod}\``} pressed={!!st && markActive(st, schema.marks.code)} onClick={run(toggleMark(schema.marks.code))}><Icon d="M9 8l-4 4 4 4M15 8l4 4-4 4" /></Tool>
        <Tool label={m("link")} disabled={off} keys={`${mod}K`} pressed={!!st && linkAt(st) !== undefined} onClick={openLink}><Icon d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1" /></Tool>
        <span class="rt-sep" aria-hidden="true" />
        <Tool label={m("bullets")} disabled={off} keys={`${mod}⇧8`} pressed={!!st && inList(st, schema.nodes.bullet_list)} onClick={run(toggleList(schema.nodes.bullet_list))}><Icon d="M10 7h10M10 12h10M10 17h10M5 7h.01M5 12h.01M5 17h.01" /></Tool>
        <Tool label={m("numbers")} disabled={off} keys={`${mod}⇧7`} pressed={!!st && inList(st, schema.nodes.ordered_list)} onClick={run(toggleList(schema.nodes.ordered_list))}><Icon d="M10 7h10M10 12h10M10 17h10M4 5.5l1.5-1V9M4 9h3M4 14.2a1.4 1.4 0 1 1 2.3 1.1L4 18h3.2" /></Tool>
        <Tool label={m("quote")} disabled={off} keys={`${mod}⇧9`} pressed={!!st && inQuote(st)} onClick={run(toggleQuote)}><Icon d="M6 17h4v-5H6.5a3 3 0 0 1 3-3M14 17h4v-5h-3.5a3 3 0 0 1 3-3" /></Tool>
        <span class="rt-sep" aria-hidden="true" />
        <Tool label={m("undo")} keys={`${mod}Z`} disabled={off || !can(undo)} onClick={run(undo)}><Icon d="M9 14L4 9l5-5M4 9h10a6 6 0 0 1 0 12h-3" /></Tool>
        <Tool label={m("redo")} keys={mac ? "⌘⇧Z" : "Ctrl+Y"} disabled={off || !can(redo)} onClick={run(redo)}><Icon d="M15 14l5-5-5-5M20 9H10a6 6 0 0 0 0 12h3" /></Tool>
      </Toolbar>
      <div ref={host} class="rt-host" />
      {lossy && <div class="field-hint rt-lossy">{m("lossy")}</div>}
      {linkOpen && st && (
        <LinkDialog href={linkAt(st)} onClose={() => { setLinkOpen(false); view.current?.focus(); }}
          onApply={(href) => {
            const v = view.current;
            setLinkOpen(false);
            if (!v) return;
            applyLink(v, href);
            v.focus();
          }} />
      )}
    </div>
  );
}

function attrs(p: FieldProps): Record<string, string> {
  const a: Record<string, string> = { id: p.id, role: "textbox", "aria-multiline": "true", "aria-label": p.label, class: "rt-content" };
  if (p.describedBy) a["aria-describedby"] = p.describedBy;
  if (p.invalid) a["aria-invalid"] = "true";
  if (p.disabled) a["aria-disabled"] = "true";
  return a;
}

/** applyLink sets (href) or removes (undefined) the link on the selection, or on the link around the cursor. */
function applyLink(v: EditorView, href: string | undefined) {
  const { state } = v;
  const type = schema.marks.link;
  let { from, to } = state.selection;
  if (state.selection.empty) {
    // The whole link the cursor is in.
    const $p = state.selection.$from;
    const start = $p.parent.childAfter($p.parentOffset);
    if (start.node && type.isInSet(start.node.marks)) {
      from = $p.start() + start.offset;
      to = from + start.node.nodeSize;
    }
  }
  let tr = state.tr.removeMark(from, to, type);
  if (href !== undefined) {
    if (from === to) {
      tr = tr.insertText(href, from);
      to = from + href.length;
    }
    tr = tr.addMark(from, to, type.create({ href }));
  }
  v.dispatch(tr.scrollIntoView());
}

function LinkDialog(props: { href: string | undefined; onClose: () => void; onApply: (href: string | undefined) => void }) {
  const [text, setText] = useState(props.href ?? "https://");
  const [error, setError] = useState<string | undefined>();
  const input = useRef<HTMLInputElement>(null);
  // After the dialog's showModal (a parent's effect, run after this one).
  useEffect(() => {
    const t = setTimeout(() => {
      input.current?.focus();
      input.current?.select();
    });
    return () => clearTimeout(t);
  }, []);
  const submit = (e: Event) => {
    e.preventDefault();
    const u = validURL(text);
    if (u === null) {
      setError(m("badUrl"));
      return;
    }
    props.onApply(u);
  };
  return (
    <Dialog title={props.href ? m("editLink") : m("addLink")} onClose={props.onClose}>
      <form onSubmit={submit} class="rt-link-form">
        <Field label={m("url")} for="rt-link-url" error={error} hint={m("urlHint")}>
          <input id="rt-link-url" type="text" autoFocus inputMode="url" autoComplete="off" spellcheck={false} value={text} maxLength={2048}
            aria-invalid={error ? "true" : undefined} aria-describedby={error ? "rt-link-url-error" : undefined}
            ref={input}
            onInput={(e) => { setText(e.currentTarget.value); setError(undefined); }} />
        </Field>
        <div class="rt-link-actions">
          {props.href && <Button variant="danger" onClick={() => props.onApply(undefined)}>{m("removeLink")}</Button>}
          <span class="spacer" />
          <Button onClick={props.onClose}>{m("cancel")}</Button>
          <Button variant="primary" type="submit">{m("apply")}</Button>
        </div>
      </form>
    </Dialog>
  );
}

/** Icon: a 24 px stroke icon (the button's aria-label names it). */
function Icon(props: { d: string }) {
  return (
    <svg class="rt-icon" viewBox="0 0 24 24" width="18" height="18" fill="none" stroke="currentColor" stroke-width="2"
      stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
      <path d={props.d} />
    </svg>
  );
}

/** Toolbar: one tab stop, arrow keys move between its controls (WAI-ARIA toolbar). */
function Toolbar(props: { label: string; disabled: boolean; children: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null);
  const items = () => Array.from(ref.current?.querySelectorAll<HTMLElement>("button:not(:disabled), select:not(:disabled)") ?? []);
  useEffect(() => {
    const all = items();
    if (!all.some((el) => el.tabIndex === 0)) all.forEach((el, i) => (el.tabIndex = i === 0 ? 0 : -1));
  });
  const onKeyDown = (e: KeyboardEvent) => {
    const all = items();
    const i = all.indexOf(document.activeElement as HTMLElement);
    if (i < 0 || (e.target as HTMLElement).tagName === "SELECT" && (e.key === "ArrowUp" || e.key === "ArrowDown")) return;
    const next = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : e.key === "Home" ? 0 : e.key === "End" ? all.length - 1 : -2;
    if (next === -2) return;
    e.preventDefault();
    const el = all[(next + all.length) % all.length];
    if (!el) return;
    all.forEach((x) => (x.tabIndex = x === el ? 0 : -1));
    el.focus();
  };
  return (
    <div ref={ref} class="rt-toolbar" role="toolbar" aria-label={props.label} aria-disabled={props.disabled ? "true" : undefined} onKeyDown={onKeyDown}>
      {props.children}
    </div>
  );
}

function Tool(props: { label: string; keys: string; pressed?: boolean; disabled?: boolean; onClick: () => void; children: ComponentChildren }) {
  return (
    <button type="button" class="btn btn-ghost rt-tool" aria-label={props.label} title={`${props.label} (${props.keys})`}
      aria-pressed={props.pressed === undefined ? undefined : props.pressed ? "true" : "false"} disabled={props.disabled}
      aria-keyshortcuts={props.keys.replace("⌘", "Meta+").replace("Ctrl+", "Control+").replace("⇧", "Shift+")}
      onMouseDown={(e) => e.preventDefault()} onClick={props.onClick}>
      {props.children}
    </button>
  );
}

export type { HNode };
