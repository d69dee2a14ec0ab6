// The reference input (ObjRef, BinRef): the chosen object as a card (name,
// type, id; a thumbnail for binary proxy objects), "Choose…" opening the
// picker (Index search over the attribute's target types, a keyboard
// list, "Create new"), and Remove. ReferenceList is the same for a
// multi-valued attribute: add, remove, move up and down.
import { useRef, useState } from "preact/hooks";
import { actions } from "../../../i18n/actions";
import { Button } from "../../../ui/ui";
import "./fields.css";
import { RefCard, useRefInfo } from "./reference-card";
import { m } from "./reference-messages";
import { isReference, move, refId } from "./reference-model";
import { Picker } from "./reference-picker";
import { type AttributeInfo, type FieldProps, type ListFieldProps, registerField, registerListField } from "./registry";

/** focusLater focuses the element once the dialog is gone (a modal dialog makes the rest inert). */
function focusLater(id: string) {
  setTimeout(() => document.getElementById(id)?.focus());
}

/** ReferenceField: one reference value. */
export function ReferenceField(props: FieldProps) {
  const [open, setOpen] = useState(false);
  const id = refId(props.value);
  const { info } = useRefInfo(props.branch, id);
  const close = () => {
    setOpen(false);
    focusLater(props.id);
  };
  return (
    <div class="ref-field" aria-describedby={props.describedBy}>
      {id === undefined ? (
        <div class={`ref-empty ${props.invalid ? "ref-invalid" : ""}`}>
          <span class="muted">{m("none")}</span>
          <Button id={props.id} disabled={props.disabled} aria-describedby={props.describedBy}
            aria-invalid={props.invalid ? "true" : undefined} onClick={() => setOpen(true)}>
            {m("choose")}
          </Button>
        </div>
      ) : (
        <RefCard key={id} branch={props.branch} id={id} attr={props.attr}>
          <Button id={props.id} disabled={props.disabled} aria-describedby={props.describedBy}
            aria-label={m("changeNamed", { field: props.label })} onClick={() => setOpen(true)}>
            {m("change")}
          </Button>
          <Button variant="ghost" disabled={props.disabled} aria-label={m("removeNamed", { name: info?.name ?? `#${id}` })}
            onClick={() => { props.onChange(undefined); focusLater(props.id); }}>
            {m("remove")}
          </Button>
        </RefCard>
      )}
      {open && (
        <Picker branch={props.branch} attr={props.attr} label={props.label} current={id === undefined ? [] : [id]}
          onClose={close} onPick={(picked) => { props.onChange(picked); close(); }} />
      )}
    </div>
  );
}

export interface ReferenceListProps {
  id: string;
  label: string;
  attr: AttributeInfo;
  branch: string;
  /** The values in order (one per row of the attribute). */
  values: readonly unknown[];
  onChange: (values: unknown[]) => void;
  disabled?: boolean;
  describedBy?: string | undefined;
  invalid?: boolean;
  /** The API's message about one row, shown under it. */
  rowError?: { row: number; text: string } | undefined;
}

/** ReferenceList: a multi-valued reference attribute, in order. */
export function ReferenceList(props: ReferenceListProps) {
  const [open, setOpen] = useState(false);
  const list = useRef<HTMLOListElement>(null);
  const ids = props.values.map(refId);
  const focusRow = (i: number, what: string) =>
    setTimeout(() => {
      // The same button of the moved row, else its other move button (at an end), else the list's Add.
      const row = list.current?.querySelector(`[data-row="${i}"]`);
      const order = [what, what === "up" ? "down" : "up", "remove"];
      const el = order.map((a) => row?.querySelector<HTMLElement>(`[data-act="${a}"]:not(:disabled)`)).find(Boolean);
      (el ?? document.getElementById(props.id))?.focus();
    });
  return (
    <div class="ref-list" role="group" aria-label={props.label} aria-describedby={props.describedBy}>
      {ids.length === 0 ? (
        <p class="muted ref-list-empty">{m("noneList")}</p>
      ) : (
        <ol ref={list} class="ref-rows">
          {ids.map((id, i) => (
            <li key={`${i}-${String(props.values[i])}`} data-row={i} class={props.rowError?.row === i ? "value-row-invalid" : ""}>
              {id === undefined ? (
                <div class="ref-card ref-card-missing">
                  <span class="ref-name">{m("notRef", { v: String(props.values[i]) })}</span>
                  <div class="ref-actions">
                    <Button variant="ghost" data-act="remove" disabled={props.disabled} onClick={() => props.onChange(props.values.filter((_, j) => j !== i))}>{m("remove")}</Button>
                  </div>
                </div>
              ) : (
                <ListRow {...props} target={id} i={i} n={ids.length} focusRow={focusRow} />
              )}
              {props.rowError?.row === i && <div class="field-error" role="alert">{props.rowError.text}</div>}
            </li>
          ))}
        </ol>
      )}
      <Button id={props.id} disabled={props.disabled} aria-invalid={props.invalid ? "true" : undefined} aria-label={actions("addTo", { field: props.label })}
        onClick={() => setOpen(true)}>
        {actions("add")}
      </Button>
      {open && (
        <Picker branch={props.branch} attr={props.attr} label={props.label} current={ids.filter((x): x is number => x !== undefined)}
          onClose={() => { setOpen(false); focusLater(props.id); }}
          onPick={(picked) => { props.onChange([...props.values, picked]); setOpen(false); focusLater(props.id); }} />
      )}
    </div>
  );
}

function ListRow(props: ReferenceListProps & { target: number; i: number; n: number; focusRow: (i: number, what: string) => void }) {
  const { info } = useRefInfo(props.branch, props.target);
  const name = info?.name ?? `#${props.target}`;
  const { i, n } = props;
  const to = (j: number, what: string) => {
    props.onChange(move(props.values, i, j));
    props.focusRow(j, what);
  };
  return (
    <RefCard branch={props.branch} id={props.target} attr={props.attr}>
      <Button variant="ghost" data-act="up" disabled={props.disabled || i === 0} aria-label={m("upNamed", { name })} title={m("up")} onClick={() => to(i - 1, "up")}>↑</Button>
      <Button variant="ghost" data-act="down" disabled={props.disabled || i === n - 1} aria-label={m("downNamed", { name })} title={m("down")} onClick={() => to(i + 1, "down")}>↓</Button>
      <Button variant="ghost" data-act="remove" disabled={props.disabled} aria-label={m("removeNamed", { name })}
        onClick={() => { props.onChange(props.values.filter((_, j) => j !== i)); props.focusRow(Math.min(i, n - 2), "remove"); }}>
        {m("remove")}
      </Button>
    </RefCard>
  );
}

registerField(isReference, () => Promise.resolve(ReferenceField));
/** The object editor's list input of references: ReferenceList, its "Add…" the list's add button. */
const ReferenceListField = (p: ListFieldProps) => <ReferenceList {...p} id={`${p.id}-add`} />;
registerListField(isReference, () => Promise.resolve(ReferenceListField));
