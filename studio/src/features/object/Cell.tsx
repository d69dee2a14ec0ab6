// One value group of the object editor (an attribute in one language and
// variant): its label, the provenance badge, "override here" / "back to
// inherited", the input of its data type from the field registry (a list
// of rows for a multi-valued attribute) and the API's message where it
// belongs. The inputs are resolved before the form shows (preloadFields).
import { useEffect, useState } from "preact/hooks";
import { messages } from "../../i18n/i18n";
import { Button, Field } from "../../ui/ui";
import { Badge, type BadgeState } from "./Badge";
import "./fields/all";
import { addId, listOfField, rowId } from "./fields/list";
import { listOf } from "./fields/list-model";
import { type AttributeInfo, type FieldComponent, fieldFor, type ListFieldComponent, listFieldFor } from "./fields/registry";
import { keyOf } from "../../data/object";

const m = messages({
  en: {
    override: "Override here", inherit: "Back to inherited", overrideFor: "Override here: {field}", inheritFor: "Back to inherited: {field}",
    noInput: "No input for the data type {type} yet; the value is shown as stored.",
  },
  de: {
    override: "Hier überschreiben", inherit: "Zurück zum geerbten Wert", overrideFor: "Hier überschreiben: {field}", inheritFor: "Zurück zum geerbten Wert: {field}",
    noInput: "Noch keine Eingabe für den Datentyp {type}; der Wert wird wie gespeichert gezeigt.",
  },
});

type Loaded = FieldComponent | ListFieldComponent | null;
const loadedFields = new Map<string, Loaded>();
const fieldKey = (dataType: string, multiple: boolean) => `${multiple ? "list" : "one"}:${dataType}`;

/** loadField resolves the input of a data type: its own list input, else the list of its single input, for a multi-valued one. */
async function loadField(dataType: string, multiple: boolean): Promise<Loaded> {
  if (multiple) {
    const own = listFieldFor(dataType);
    if (own) return own();
  }
  const one = fieldFor(dataType);
  if (!one) return null;
  const f = await one();
  return multiple ? listOfField(f) : f;
}

/** useField is the input of an attribute (undefined while loading, null when none takes its data type). */
function useField(a: AttributeInfo): Loaded | undefined {
  const k = fieldKey(a.dataType, a.multiple);
  // Components are functions: useState and its setter would call them, so they are wrapped.
  const [c, setC] = useState<Loaded | undefined>(() => loadedFields.get(k));
  useEffect(() => {
    if (loadedFields.has(k)) return setC(() => loadedFields.get(k));
    let live = true;
    loadField(a.dataType, a.multiple).then((f) => { loadedFields.set(k, f); if (live) setC(() => f); }, () => live && setC(null));
    return () => { live = false; };
  }, [k]);
  return c;
}

/** preloadFields resolves the inputs of the attributes before the form is shown, so the first render has them. */
export async function preloadFields(attrs: readonly AttributeInfo[]): Promise<void> {
  await Promise.all(attrs.map(async (a) => {
    const k = fieldKey(a.dataType, a.multiple);
    if (!loadedFields.has(k)) loadedFields.set(k, await loadField(a.dataType, a.multiple).catch(() => null));
  }));
}

function RawInput(p: { id: string; value: unknown }) {
  const text = p.value === undefined ? "" : JSON.stringify(p.value);
  return <input class="input" id={p.id} readOnly value={text} />;
}

/** CellError is the API's message about a value group, and the row it is about in a list. */
export interface CellError {
  text: string;
  row?: number | undefined;
}

export interface CellProps {
  attr: AttributeInfo;
  lang: number;
  variant: number;
  label: string;
  shown: unknown;
  state: BadgeState;
  badge: string;
  fallbackHint?: string | undefined;
  canOverride: boolean;
  canInherit: boolean;
  readOnly: boolean;
  error?: CellError | undefined;
  branch: string;
  onChange: (v: unknown) => void;
  onOverride: () => void;
  onInherit: () => void;
}

/** cellId is the id of a value group's input (the first control of a list). */
export function cellId(attr: number, lang: number, variant: number): string {
  return `f-${attr}-${lang}-${variant}`;
}

/** errorTarget is the id of the control an error is about (its row in a list). */
export function errorTarget(a: AttributeInfo, lang: number, variant: number, row: number | undefined): string {
  const id = cellId(a.id, lang, variant);
  if (!a.multiple) return id;
  return row === undefined ? addId(id) : rowId(id, row);
}

export function Cell(p: CellProps) {
  const Input = useField(p.attr);
  const id = cellId(p.attr.id, p.lang, p.variant);
  const errId = `${id}-error`;
  const listError = p.attr.multiple && p.error?.row !== undefined;
  const fieldError = listError ? undefined : p.error?.text;
  return (
    <div class={`cell cell-${p.state.kind}`} data-key={keyOf(p.attr.id, p.lang, p.variant)}>
      <Field label={p.label + (p.attr.required ? " *" : "")} for={p.attr.multiple ? addId(id) : id} error={fieldError}
        hint={
          <span class="cell-meta">
            <Badge state={p.state} text={p.badge} />
            {p.fallbackHint && <span class="fallback-value">{p.fallbackHint}</span>}
            {!p.readOnly && p.canOverride && <Button variant="ghost" class="btn-small" aria-label={m("overrideFor", { field: p.label })} onClick={p.onOverride}>{m("override")}</Button>}
            {!p.readOnly && p.canInherit && <Button variant="ghost" class="btn-small" aria-label={m("inheritFor", { field: p.label })} onClick={p.onInherit}>{m("inherit")}</Button>}
          </span>
        }>
        {Input === undefined ? <div class="skeleton-line" aria-hidden="true" /> : Input === null ? (
          <>
            <RawInput id={id} value={p.shown} />
            <div class="field-hint">{m("noInput", { type: p.attr.dataType || "?" })}</div>
          </>
        ) : p.attr.multiple ? (
          (() => {
            const List = Input as ListFieldComponent;
            return (
              <List id={id} label={p.label} attr={p.attr} branch={p.branch} values={listOf(p.shown)} onChange={p.onChange}
                disabled={p.readOnly} invalid={!!fieldError} describedBy={fieldError ? errId : undefined}
                rowError={listError ? { row: p.error!.row!, text: p.error!.text } : undefined} />
            );
          })()
        ) : (
          (() => {
            const One = Input as FieldComponent;
            return (
              <One id={id} label={p.label} attr={p.attr} branch={p.branch} value={p.shown} onChange={p.onChange} disabled={p.readOnly}
                invalid={!!fieldError} describedBy={fieldError ? errId : undefined} />
            );
          })()
        )}
      </Field>
    </div>
  );
}
