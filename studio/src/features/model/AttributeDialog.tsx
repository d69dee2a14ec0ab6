// Creating an attribute of a type and changing one: names, ApiIdentifier
// (at creation), the data type (cards with a short explanation; fixed once
// created), target types of references, multiplicity, language
// dependence, required. The API's refusals show at the field they concern.
import { useEffect, useRef, useState } from "preact/hooks";
import {
  createAttribute, dataTypes, isBinary, isReference, nameIn, updateAttribute,
  type AttributeDef, type AttributeDraft, type FormField, type Language, type TypeDef, type TypeModel,
} from "../../data/model";
import { actions } from "../../i18n/actions";
import { messages } from "../../i18n/i18n";
import { Button, Dialog, Field, Lock, showProblem, toast } from "../../ui/ui";
import { dataTypeHelp, dataTypeLabel } from "./datatypes";
import { ApiIdentifierField, NameFields } from "./fields";
import { toProblem, type FormProblem } from "./TypeDialog";

const m = messages({
  en: {
    newAttr: "New attribute", editAttr: "Edit attribute", attribute: "attribute", save: "Save", cancel: "Cancel", saving: "Saving…",
    dataType: "Data type", dataTypeFixed: "The data type is fixed once the attribute exists: stored values would no longer match it.",
    targets: "Target types", targetsHint: "Which types the references may point to. None chosen: any object.",
    noTypes: "This branch has no types to refer to yet.",
    values: "Values", one: "One value", many: "Several values", max: "At most (0 = no limit)",
    language: "Language dependent", languageHint: "A separate value per language (titles, texts); otherwise one value for all languages.",
    required: "Required", requiredHint: "An object needs a value before it is complete.",
    needName: "Give the attribute a name in at least one language.", needType: "Choose a data type.", badMax: "Enter 0 or a positive whole number.",
    binaryHint: "Files are uploaded in the object editor and stored as binary objects.",
    created: "Attribute added.", saved: "Attribute saved.",
  },
  de: {
    newAttr: "Neues Attribut", editAttr: "Attribut bearbeiten", attribute: "Attribut", save: "Speichern", cancel: "Abbrechen", saving: "Wird gespeichert…",
    dataType: "Datentyp", dataTypeFixed: "Der Datentyp steht fest, sobald das Attribut existiert: gespeicherte Werte passten sonst nicht mehr.",
    targets: "Zieltypen", targetsHint: "Auf welche Typen die Verweise zeigen dürfen. Keiner gewählt: beliebige Objekte.",
    noTypes: "Dieser Branch hat noch keine Typen, auf die verwiesen werden kann.",
    values: "Werte", one: "Ein Wert", many: "Mehrere Werte", max: "Höchstens (0 = unbegrenzt)",
    language: "Sprachabhängig", languageHint: "Ein eigener Wert je Sprache (Titel, Texte); sonst ein Wert für alle Sprachen.",
    required: "Pflichtfeld", requiredHint: "Ein Objekt braucht einen Wert, bevor es vollständig ist.",
    needName: "Geben Sie dem Attribut einen Namen in mindestens einer Sprache.", needType: "Wählen Sie einen Datentyp.", badMax: "Geben Sie 0 oder eine positive ganze Zahl ein.",
    binaryHint: "Dateien werden im Objekteditor hochgeladen und als Binärobjekte gespeichert.",
    created: "Attribut hinzugefügt.", saved: "Attribut gespeichert.",
  },
});

export function AttributeDialog(props: {
  branch: string;
  model: TypeModel;
  languages: Language[];
  types: TypeDef[];
  pref: number[];
  attribute?: AttributeDef;
  onClose: () => void;
  onSaved: (id: number) => void;
}) {
  const a = props.attribute;
  const [d, setD] = useState<AttributeDraft>({
    apiIdentifier: a?.apiIdentifier ?? "", names: { ...(a?.names ?? {}) }, dataType: a?.dataType ?? "",
    multi: a?.multi ?? false, maxValues: a?.maxValues ?? 0, refTypes: a?.refTypes ?? [], langDep: a?.langDep ?? false, required: a?.required ?? false,
  });
  const [problem, setProblem] = useState<FormProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => showProblem(formRef.current), [problem]);
  const at = (f: FormField) => (problem?.field === f ? problem.text : undefined);
  const set = (p: Partial<AttributeDraft>) => setD({ ...d, ...p });
  const targets = props.types.filter((t) => !t.system || d.refTypes.includes(t.id));

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!Object.values(d.names).some((n) => n.trim())) return setProblem({ field: "names", text: m("needName") });
    if (!d.dataType) return setProblem({ field: "dataType", text: m("needType") });
    if (!Number.isInteger(d.maxValues) || d.maxValues < 0) return setProblem({ field: "maxValues", text: m("badMax") });
    setBusy(true);
    setProblem(null);
    try {
      if (a) {
        await updateAttribute(props.branch, a, d);
        toast(m("saved"));
        props.onSaved(a.id);
      } else {
        const id = await createAttribute(props.branch, props.model, d);
        toast(m("created"));
        props.onSaved(id);
      }
    } catch (err) {
      setProblem(toProblem(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={a ? m("editAttr") : m("newAttr")} onClose={props.onClose}
      footer={<>
        <Button onClick={props.onClose}>{m("cancel")}</Button>
        <Button variant="primary" type="submit" form="attr-form" disabled={busy}
          aria-label={busy || a ? undefined : actions("addThing", { thing: m("attribute") })}>{busy ? m("saving") : a ? m("save") : actions("add")}</Button>
      </>}>
      <form ref={formRef} id="attr-form" class="attr-form" onSubmit={submit} noValidate>
        {problem && problem.field === null && <div class="problem" role="alert">{problem.text}</div>}
        <NameFields idPrefix="attr" languages={props.languages} names={d.names} error={at("names")} autoFocus onChange={(names) => set({ names })} />
        <ApiIdentifierField id="attr-api" value={d.apiIdentifier} creating={!a} error={at("apiIdentifier")} onChange={(apiIdentifier) => set({ apiIdentifier })} />

        <fieldset class="fieldset" aria-describedby={at("dataType") ? "attr-dt-error" : a ? "attr-dt-fixed" : undefined}>
          <legend>{m("dataType")}</legend>
          {a && <p class="field-hint" id="attr-dt-fixed"><Lock />{m("dataTypeFixed")}</p>}
          <div class="dt-cards" role="radiogroup" aria-label={m("dataType")}>
            {(a && !(dataTypes as readonly string[]).includes(a.dataType) ? [a.dataType] : dataTypes).map((dt) => (
              <label key={dt} class={`dt-card ${d.dataType === dt ? "dt-card-on" : ""}`}>
                <input type="radio" name="dataType" value={dt} checked={d.dataType === dt} disabled={!!a} aria-invalid={at("dataType") ? true : undefined}
                  onChange={() => set({ dataType: dt, refTypes: isReference(dt) ? d.refTypes : [] })} />
                <span class="dt-name">{dataTypeLabel(dt)} <code class="dt-code">{dt}</code></span>
                <span class="dt-help">{(dataTypes as readonly string[]).includes(dt) ? dataTypeHelp(dt as (typeof dataTypes)[number]) : ""}</span>
              </label>
            ))}
          </div>
          {at("dataType") && <div class="field-error" id="attr-dt-error" role="alert">{at("dataType")}</div>}
          {isBinary(d.dataType) && <p class="field-hint">{m("binaryHint")}</p>}
        </fieldset>

        {isReference(d.dataType) && (
          <fieldset class="fieldset" aria-describedby="attr-targets-hint">
            <legend>{m("targets")}</legend>
            <p class="field-hint" id="attr-targets-hint">{m("targetsHint")}</p>
            {targets.length === 0 && <p class="muted">{m("noTypes")}</p>}
            <div class="checks">
              {targets.map((t) => (
                <label key={t.id} class="check">
                  <input type="checkbox" checked={d.refTypes.includes(t.id)}
                    onChange={(e) => set({ refTypes: e.currentTarget.checked ? [...d.refTypes, t.id] : d.refTypes.filter((x) => x !== t.id) })} />
                  {nameIn(t.names, props.pref, t.apiIdentifier ?? `#${t.id}`)}
                </label>
              ))}
            </div>
            {at("refTypes") && <div class="field-error" role="alert">{at("refTypes")}</div>}
          </fieldset>
        )}

        <fieldset class="fieldset">
          <legend>{m("values")}</legend>
          <div class="checks">
            <label class="check"><input type="radio" name="multi" checked={!d.multi} onChange={() => set({ multi: false })} />{m("one")}</label>
            <label class="check"><input type="radio" name="multi" checked={d.multi} onChange={() => set({ multi: true })} />{m("many")}</label>
          </div>
          {d.multi && (
            <Field label={m("max")} for="attr-max" error={at("maxValues") ?? at("multi")}>
              <input id="attr-max" type="number" min={0} step={1} value={String(d.maxValues)} class="narrow"
                aria-invalid={at("maxValues") ? true : undefined}
                onInput={(e) => set({ maxValues: e.currentTarget.value === "" ? 0 : Number(e.currentTarget.value) })} />
            </Field>
          )}
        </fieldset>

        <div class="field">
          <label class="check">
            <input type="checkbox" checked={d.langDep} aria-describedby="attr-lang-hint" onChange={(e) => set({ langDep: e.currentTarget.checked })} />
            {m("language")}
          </label>
          <div class="field-hint" id="attr-lang-hint">{m("languageHint")}</div>
          {at("langDep") && <div class="field-error" role="alert">{at("langDep")}</div>}
        </div>
        <div class="field">
          <label class="check">
            <input type="checkbox" checked={d.required} aria-describedby="attr-req-hint" onChange={(e) => set({ required: e.currentTarget.checked })} />
            {m("required")}
          </label>
          <div class="field-hint" id="attr-req-hint">{m("requiredHint")}</div>
          {at("required") && <div class="field-error" role="alert">{at("required")}</div>}
        </div>
      </form>
    </Dialog>
  );
}
