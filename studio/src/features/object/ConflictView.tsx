// The conflict view: a save was refused (412) because someone saved the
// object after the editor read it. Every edited field shows the editor's
// value beside the other writer's; the editor chooses per field, and the
// choice is saved with the object's new ETag.
import { useState } from "preact/hooks";
import { type ConflictField, parseKey } from "../../data/object";
import { useEffect } from "preact/hooks";
import { formatDateTime, locale, messages } from "../../i18n/i18n";
import { userName } from "../../live/activity";
import { useStore } from "../../store";
import { Avatar, Button, Dialog } from "../../ui/ui";
import { showValue } from "./Badge";
import type { AttributeInfo } from "./fields/registry";
import type { Writer } from "./writer";

const m = messages({
  en: {
    title: "Someone else saved this object", intro: "It was saved by another writer after you opened it{tx}. Choose for each field which value to keep.",
    byWho: "{user} saved it after you opened it{when}{tx}. Choose for each field which value to keep.", when: ", {time}",
    lookingUp: "Looking up who saved it…",
    tx: " (transaction {n})", field: "Field", yours: "Yours", theirs: "Theirs", keepMine: "Keep mine", takeTheirs: "Take theirs",
    changed: "changed by the other writer", unchanged: "not changed by the other writer", inherit: "back to the inherited value",
    cancel: "Back to editing", save: "Save my choices", allMine: "Keep all mine", allTheirs: "Take all theirs",
  },
  de: {
    title: "Jemand anderes hat dieses Objekt gespeichert", intro: "Es wurde nach dem Öffnen von jemand anderem gespeichert{tx}. Wählen Sie je Feld, welcher Wert bleibt.",
    byWho: "{user} hat es nach Ihrem Öffnen gespeichert{when}{tx}. Wählen Sie je Feld, welcher Wert bleibt.", when: ", {time}",
    lookingUp: "Wer es gespeichert hat, wird nachgesehen…",
    tx: " (Transaktion {n})", field: "Feld", yours: "Ihrer", theirs: "Deren", keepMine: "Meinen behalten", takeTheirs: "Deren übernehmen",
    changed: "vom anderen geändert", unchanged: "vom anderen nicht geändert", inherit: "zurück zum geerbten Wert",
    cancel: "Zurück zum Bearbeiten", save: "Auswahl speichern", allMine: "Alle meine behalten", allTheirs: "Alle deren übernehmen",
  },
});

export function ConflictView(props: {
  fields: ConflictField[];
  attributes: AttributeInfo[];
  languageName: (id: number) => string;
  variantName: (id: number) => string;
  lastTransaction?: number | undefined;
  /** Who saved meanwhile (null while looked up or not known). */
  writer: Writer | null;
  onCancel: () => void;
  onResolve: (edits: Record<string, ConflictField["yours"]>) => void;
}) {
  const [choice, setChoice] = useState<Record<string, "yours" | "theirs">>({});
  const l = useStore(locale);
  const [who, setWho] = useState("");
  const user = props.writer?.user ?? "";
  useEffect(() => {
    let live = true;
    setWho("");
    if (user) void userName(user, l === "de" ? [202, 201] : [201, 202]).then((n) => live && setWho(n));
    return () => { live = false; };
  }, [user, l]);
  const attr = (id: number) => props.attributes.find((a) => a.id === id);
  const label = (key: string) => {
    const k = parseKey(key);
    const a = attr(k.attr);
    return (a?.name ?? `#${k.attr}`) + (a?.languageDependent ? ` (${props.languageName(k.lang)})` : "") + (k.variant ? ` — ${props.variantName(k.variant)}` : "");
  };
  const pick = (key: string) => choice[key] ?? "yours";
  const all = (c: "yours" | "theirs") => setChoice(Object.fromEntries(props.fields.map((f) => [f.key, c])));
  const resolve = () => {
    const out: Record<string, ConflictField["yours"]> = {};
    for (const f of props.fields) if (pick(f.key) === "yours") out[f.key] = f.yours;
    props.onResolve(out);
  };
  return (
    <Dialog title={m("title")} onClose={props.onCancel}
      footer={
        <>
          <Button onClick={props.onCancel}>{m("cancel")}</Button>
          <Button variant="primary" onClick={resolve}>{m("save")}</Button>
        </>
      }>
      <div class="conflict-writer">
        {who && <Avatar name={who} title={user} />}
        <p>
        {who ? m("byWho", { user: who, when: props.writer?.at ? m("when", { time: formatDateTime(props.writer.at) }) : "", tx: props.lastTransaction ? m("tx", { n: props.lastTransaction }) : "" })
          : m("intro", { tx: props.lastTransaction ? m("tx", { n: props.lastTransaction }) : "" })}
        {!props.writer && user === "" && <span class="visually-hidden"> {m("lookingUp")}</span>}
        </p>
      </div>
      <div class="conflict-bulk">
        <Button class="btn-small" onClick={() => all("yours")}>{m("allMine")}</Button>
        <Button class="btn-small" onClick={() => all("theirs")}>{m("allTheirs")}</Button>
      </div>
      <table class="conflict">
        <thead>
          <tr><th scope="col">{m("field")}</th><th scope="col">{m("yours")}</th><th scope="col">{m("theirs")}</th></tr>
        </thead>
        <tbody>
          {props.fields.map((f) => {
            const a = attr(parseKey(f.key).attr);
            const name = `c-${f.key.split(":").join("-")}`;
            const yours = f.yours.kind === "inherit" ? m("inherit") : showValue(f.yours.value, a);
            return (
              <tr key={f.key} class={f.changed ? "changed" : ""} data-key={f.key}>
                <th scope="row">
                  {label(f.key)}
                  <div class="muted small">{f.changed ? m("changed") : m("unchanged")}</div>
                </th>
                <td class={pick(f.key) === "yours" ? "chosen" : ""}>
                  <label class="choice">
                    <input type="radio" name={name} checked={pick(f.key) === "yours"} onChange={() => setChoice({ ...choice, [f.key]: "yours" })}
                      aria-label={`${m("keepMine")}: ${label(f.key)}`} />
                    <span class="conflict-value">{yours}</span>
                  </label>
                </td>
                <td class={pick(f.key) === "theirs" ? "chosen" : ""}>
                  <label class="choice">
                    <input type="radio" name={name} checked={pick(f.key) === "theirs"} onChange={() => setChoice({ ...choice, [f.key]: "theirs" })}
                      aria-label={`${m("takeTheirs")}: ${label(f.key)}`} />
                    <span class="conflict-value">{showValue(f.theirs, a)}</span>
                  </label>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </Dialog>
  );
}
