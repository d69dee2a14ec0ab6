// The controls both dialogs share: names per language, the ApiIdentifier
// (editable only at creation), and a form-level problem.
import type { Language, Names } from "../../data/model";
import { messages } from "../../i18n/i18n";
import { Field, Lock } from "../../ui/ui";

const m = messages({
  en: {
    names: "Names",
    nameIn: "Name ({lang})",
    api: "ApiIdentifier",
    apiNew: "How the APIs and the generated code address it: a letter or _, then letters, digits, _ . -. It cannot change once created.",
    apiFixed: "Fixed since creation: clients, Delivery props and generated code address it by this name.",
    apiNone: "None: set at creation only.",
  },
  de: {
    names: "Namen",
    nameIn: "Name ({lang})",
    api: "ApiIdentifier",
    apiNew: "So sprechen die APIs und der generierte Code es an: ein Buchstabe oder _, dann Buchstaben, Ziffern, _ . -. Nach dem Anlegen nicht mehr änderbar.",
    apiFixed: "Seit dem Anlegen fest: Clients, Delivery-Props und generierter Code sprechen es unter diesem Namen an.",
    apiNone: "Keiner: nur beim Anlegen setzbar.",
  },
});

export function NameFields(props: { idPrefix: string; languages: Language[]; names: Names; error?: string | undefined; onChange: (n: Names) => void; autoFocus?: boolean }) {
  return (
    <fieldset class="fieldset">
      <legend>{m("names")}</legend>
      {props.languages.map((l, i) => (
        <Field key={l.id} label={m("nameIn", { lang: l.name })} for={`${props.idPrefix}-name-${l.id}`} error={i === 0 ? props.error : undefined}>
          <input id={`${props.idPrefix}-name-${l.id}`} value={props.names[l.id] ?? ""} maxLength={500} autoFocus={props.autoFocus && i === 0}
            aria-invalid={i === 0 && props.error ? true : undefined} aria-describedby={i === 0 && props.error ? `${props.idPrefix}-name-${l.id}-error` : undefined}
            lang={l.code || undefined}
            onInput={(e) => props.onChange({ ...props.names, [l.id]: e.currentTarget.value })} />
        </Field>
      ))}
    </fieldset>
  );
}

export function ApiIdentifierField(props: { id: string; value: string; creating: boolean; error?: string | undefined; onChange: (s: string) => void }) {
  if (!props.creating) {
    return (
      <div class="field">
        <span class="field-label">{m("api")}</span>
        <code class="api-id" id={props.id}>{props.value || "—"}</code>
        <div class="field-hint"><Lock />{props.value ? m("apiFixed") : m("apiNone")}</div>
      </div>
    );
  }
  return (
    <Field label={m("api")} for={props.id} error={props.error} hint={m("apiNew")}>
      <input id={props.id} value={props.value} maxLength={200} spellcheck={false} autoComplete="off" class="mono"
        aria-invalid={props.error ? true : undefined} aria-describedby={props.error ? `${props.id}-error` : undefined}
        onInput={(e) => props.onChange(e.currentTarget.value)} />
    </Field>
  );
}
