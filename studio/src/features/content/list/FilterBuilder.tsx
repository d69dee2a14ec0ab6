// The filter builder: conditions (attribute, operator of the Delivery
// syntax, value) joined with &&, the expression they make, and the API's
// message about it where it belongs.
import { useEffect, useState } from "preact/hooks";
import { type Condition, expression, maxQuery, operators, parseExpression } from "../../../data/list";
import { actions } from "../../../i18n/actions";
import { Button, problemText } from "../../../ui/ui";
import { m } from "./messages";

const blank = (): Condition => ({ field: "", op: "=", value: "" });

export function FilterBuilder(props: {
  filter: string;
  /** Attribute names to offer (ApiIdentifiers and meta fields). */
  fields: readonly string[];
  /** The attributes' names by ApiIdentifier, shown beside the suggestions. */
  labels: Readonly<Record<string, string>>;
  error: unknown;
  onApply: (expr: string) => void;
}) {
  const parsed = parseExpression(props.filter);
  const [conds, setConds] = useState<Condition[]>(parsed?.length ? parsed : [blank()]);
  useEffect(() => {
    const p = parseExpression(props.filter);
    setConds(p?.length ? p : [blank()]);
  }, [props.filter]);
  const expr = parsed === null && conds.length === 0 ? props.filter : expression(conds);
  const set = (i: number, c: Partial<Condition>) => setConds(conds.map((x, j) => (j === i ? { ...x, ...c } : x)));
  return (
    <form class="filter-builder" aria-label={m("filter")}
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply(expr);
      }}>
      <datalist id="filter-fields">
        {props.fields.map((f) => <option key={f} value={f} label={props.labels[f] !== f ? props.labels[f] : undefined} />)}
      </datalist>
      {conds.map((c, i) => (
        <div class="filter-row" key={i}>
          <input class="input" list="filter-fields" aria-label={m("attribute", { i: i + 1 })} value={c.field} maxLength={200}
            placeholder="price" onInput={(e) => set(i, { field: e.currentTarget.value })} />
          <select class="input" aria-label={m("operator", { i: i + 1 })} value={c.op}
            onChange={(e) => set(i, { op: e.currentTarget.value as Condition["op"] })}>
            {operators.map((o) => <option key={o} value={o}>{o}</option>)}
          </select>
          <input class="input" aria-label={m("value", { i: i + 1 })} value={c.value} maxLength={maxQuery}
            onInput={(e) => set(i, { value: e.currentTarget.value })} />
          <Button variant="ghost" aria-label={m("remove", { i: i + 1 })} title={m("remove", { i: i + 1 })}
            onClick={() => setConds(conds.length > 1 ? conds.filter((_, j) => j !== i) : [blank()])}>×</Button>
        </div>
      ))}
      <div class="filter-foot">
        <Button aria-label={actions("addThing", { thing: m("condition") })} onClick={() => setConds([...conds, blank()])}>{actions("add")}</Button>
        <span class="filter-expr">
          <span class="muted">{m("expression")}: </span>
          <code>{expr || m("noExpression")}</code>
        </span>
        <span class="spacer" />
        <Button onClick={() => props.onApply("")}>{m("clear")}</Button>
        <Button variant="primary" type="submit">{m("apply")}</Button>
      </div>
      {props.error !== null && props.error !== undefined && (
        <div class="problem" role="alert" id="filter-error">{problemText(props.error)}</div>
      )}
    </form>
  );
}
