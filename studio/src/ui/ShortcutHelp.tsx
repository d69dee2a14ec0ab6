// The keyboard help (press ?): every shortcut registered right now.
import { messages } from "../i18n/i18n";
import { useStore } from "../store";
import { display, labelOf, shortcuts } from "./shortcuts";
import { Dialog } from "./ui";

const m = messages({
  en: { title: "Keyboard shortcuts", keys: "Keys", action: "Action", then: "then" },
  de: { title: "Tastenkürzel", keys: "Tasten", action: "Aktion", then: "dann" },
});

export function ShortcutHelp(props: { onClose: () => void }) {
  const all = useStore(shortcuts);
  const seen = new Set<string>();
  const rows = [...all].reverse().filter((s) => !seen.has(s.keys) && seen.add(s.keys));
  return (
    <Dialog title={m("title")} onClose={props.onClose}>
      <table class="shortcut-table">
        <thead>
          <tr>
            <th scope="col">{m("keys")}</th>
            <th scope="col">{m("action")}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s.keys}>
              <td>
                <kbd>{display(s.keys, undefined, m("then"))}</kbd>
              </td>
              <td>{labelOf(s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}
