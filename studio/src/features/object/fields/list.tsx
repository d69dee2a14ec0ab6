// The generic input of a multi-valued attribute: one row per value, in the
// order they are stored (sortReverse 0, 1, 2 …), each row the data type's
// own single-value input with move up, move down and remove, and "Add a
// value" at the end. Alt+↑ and Alt+↓ move the row that has the focus. The
// data types with a list input of their own (references: cards) register
// it with registerListField; every other one gets this list of its input.
import { useRef } from "preact/hooks";
import { actions } from "../../../i18n/actions";
import { messages } from "../../../i18n/i18n";
import { Button } from "../../../ui/ui";
import "./fields.css";
import { addRow, moveKey, removeRow, RowKeys, move } from "./list-model";
import type { FieldComponent, ListFieldComponent, ListFieldProps } from "./registry";

export const lm = messages({
  en: {
    row: "{field}, value {n} of {count}", none: "No values.",
    up: "Move up", down: "Move down", remove: "Remove", upNamed: "Move value {n} of {field} up", downNamed: "Move value {n} of {field} down",
    removeNamed: "Remove value {n} of {field}", keys: "Alt+↑ and Alt+↓ move a value",
  },
  de: {
    row: "{field}, Wert {n} von {count}", none: "Keine Werte.",
    up: "Nach oben", down: "Nach unten", remove: "Entfernen", upNamed: "Wert {n} von {field} nach oben", downNamed: "Wert {n} von {field} nach unten",
    removeNamed: "Wert {n} von {field} entfernen", keys: "Alt+↑ und Alt+↓ verschieben einen Wert",
  },
});

/** rowId is the id of row i's input; addId the id of the list's "Add" button. */
export const rowId = (id: string, i: number) => `${id}-${i}`;
export const addId = (id: string) => `${id}-add`;

const made = new WeakMap<FieldComponent, ListFieldComponent>();

/** listOfField is the list input made of a data type's single-value input (one per input component). */
export function listOfField(Input: FieldComponent): ListFieldComponent {
  let c = made.get(Input);
  if (!c) {
    c = (p: ListFieldProps) => <ValueList {...p} Input={Input} />;
    made.set(Input, c);
  }
  return c;
}

function ValueList(p: ListFieldProps & { Input: FieldComponent }) {
  const keys = useRef(new RowKeys());
  const list = useRef<HTMLOListElement>(null);
  const rowKeys = keys.current.of(p.values.length);
  const n = p.values.length;
  // After a change the same control of the moved row (else its input) has the focus.
  const focus = (i: number, act?: string) =>
    setTimeout(() => {
      const row = list.current?.querySelector(`[data-row="${i}"]`);
      const el = (act && row?.querySelector<HTMLElement>(`[data-act="${act}"]:not(:disabled)`)) || document.getElementById(rowId(p.id, i));
      (el ?? document.getElementById(addId(p.id)))?.focus();
    });
  const to = (i: number, j: number, act?: string) => {
    if (j < 0 || j >= n || i === j) return;
    keys.current.move(i, j);
    p.onChange(move(p.values, i, j));
    focus(j, act);
  };
  const remove = (i: number) => {
    keys.current.remove(i);
    p.onChange(removeRow(p.values, i));
    focus(Math.min(i, n - 2), "remove");
  };
  const add = () => {
    keys.current.add();
    p.onChange(addRow(p.values));
    focus(n);
  };
  const { Input } = p;
  return (
    <div class="value-list" role="group" aria-label={p.label} aria-describedby={p.describedBy}>
      {n === 0 ? <p class="muted value-list-empty">{lm("none")}</p> : (
        <ol ref={list} class="value-rows">
          {p.values.map((v, i) => {
            const id = rowId(p.id, i);
            const err = p.rowError?.row === i ? p.rowError.text : undefined;
            const name = lm("row", { field: p.label, n: i + 1, count: n });
            return (
              <li key={rowKeys[i]} data-row={i} class={`value-row ${err ? "value-row-invalid" : ""}`}
                onKeyDown={(e) => {
                  const step = moveKey(e);
                  if (step === 0) return;
                  e.preventDefault();
                  const act = (e.target as HTMLElement).dataset?.act;
                  to(i, i + step, act);
                }}>
                <label class="visually-hidden" for={id}>{name}</label>
                <div class="value-input">
                  <Input id={id} label={name} attr={p.attr} branch={p.branch} value={v ?? undefined} disabled={p.disabled}
                    onChange={(x) => p.onChange(p.values.map((y, j) => (j === i ? x : y)))}
                    invalid={!!err} describedBy={err ? `${id}-error` : undefined} />
                  {err && <div class="field-error" id={`${id}-error`} role="alert">{err}</div>}
                </div>
                <div class="value-actions">
                  <Button variant="ghost" class="btn-small" data-act="up" disabled={p.disabled || i === 0} title={lm("up")}
                    aria-label={lm("upNamed", { n: i + 1, field: p.label })} onClick={() => to(i, i - 1, "up")}>↑</Button>
                  <Button variant="ghost" class="btn-small" data-act="down" disabled={p.disabled || i === n - 1} title={lm("down")}
                    aria-label={lm("downNamed", { n: i + 1, field: p.label })} onClick={() => to(i, i + 1, "down")}>↓</Button>
                  <Button variant="ghost" class="btn-small" data-act="remove" disabled={p.disabled}
                    aria-label={lm("removeNamed", { n: i + 1, field: p.label })} onClick={() => remove(i)}>{lm("remove")}</Button>
                </div>
              </li>
            );
          })}
        </ol>
      )}
      {!p.disabled && (
        <Button id={addId(p.id)} class="btn-small" aria-label={actions("addTo", { field: p.label })} title={lm("keys")}
          aria-invalid={p.invalid ? "true" : undefined} onClick={add}>
          {actions("add")}
        </Button>
      )}
    </div>
  );
}
