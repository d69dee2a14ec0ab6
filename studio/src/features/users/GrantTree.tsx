// The readable and writable branches, chosen from the branch tree: one row
// per branch (indented by depth) with its access (none, read, read and
// write); what a grant further up already gives is said beside it.
import type { BranchNode } from "../../data/branches";
import { type Access, effective, grants } from "../../data/users";
import { m } from "./messages";

export function GrantTree(p: { tree: BranchNode[]; choice: Map<number, Access>; onChange: (next: Map<number, Access>) => void; idPrefix: string; disabled?: boolean }) {
  const g = grants(p.choice);
  const eff = effective(p.tree, g.read, g.write);
  const names = new Map(p.tree.map((n) => [n.id, n.name]));
  return (
    <fieldset class="grant-tree">
      <legend>{m("grants")}</legend>
      <p class="muted">{m("grantsHint")}</p>
      <ul>
        {p.tree.map((n) => {
          const id = `${p.idPrefix}-branch-${n.id}`;
          const own = p.choice.get(n.id) ?? "none";
          const e = eff.get(n.id);
          const from = e && e.access !== "none" && e.from !== n.id ? m("inherited", { access: m(e.access), branch: names.get(e.from) ?? String(e.from) }) : "";
          return (
            <li key={n.id} style={{ paddingInlineStart: `${n.depth * 1.25}rem` }} class="grant-row">
              <label for={id} class="grant-name">{n.name}</label>
              <select id={id} class="input" aria-label={m("accessTo", { branch: n.name })} value={own} disabled={p.disabled}
                aria-describedby={from ? `${id}-from` : undefined}
                onChange={(ev) => {
                  const next = new Map(p.choice);
                  const v = ev.currentTarget.value as Access;
                  if (v === "none") next.delete(n.id);
                  else next.set(n.id, v);
                  p.onChange(next);
                }}>
                <option value="none">{m("none")}</option>
                <option value="read">{m("read")}</option>
                <option value="write">{m("write")}</option>
              </select>
              {from && <span id={`${id}-from`} class="muted grant-from">{from}</span>}
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}
