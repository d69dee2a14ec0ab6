// One type: its names, ApiIdentifier, display-name attribute and its
// attributes as a table; system types read-only with the reason.
import { useEffect, useState } from "preact/hooks";
import { loadType, nameIn, removeFromForms, setDisplayName, type AttributeDef, type BranchSchema, type TypeDef, type TypeModel } from "../../data/model";
import { locale, messages } from "../../i18n/i18n";
import { uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Dialog, Field, Lock, Pane, Problem, Skeleton, problemText, toast } from "../../ui/ui";
import { AttributeDialog } from "./AttributeDialog";
import { dataTypeLabel } from "./datatypes";
import { ModelReadOnly } from "./ModelReadOnly";
import { TypeDialog } from "./TypeDialog";

const m = messages({
  en: {
    editType: "Edit type", newAttr: "New attribute", id: "ID", api: "ApiIdentifier", apiFixed: "Fixed since creation: clients address the type by it.",
    names: "Names", noName: "—", systemTitle: "System type: read-only",
    system: "This type belongs to the CMS itself. Its id, ApiIdentifier and attributes are bootstrapped and the services rely on them: the API refuses to delete it or to change its ApiIdentifier, so the studio does not offer changes.",
    displayName: "Display-name attribute", displayNameHint: "Whose value names the type's objects in lists and references.", byName: "Name (the object's own name)",
    attributes: "Attributes", noAttrs: "No attributes yet. Add the first one.", noAttrsSystem: "The CMS defines this type's attributes; no form of the branch lists them.", noAttrsRead: "No attributes yet.",
    colName: "Name", colApi: "ApiIdentifier", colType: "Data type", colValues: "Values", colLang: "Language", colReq: "Required", colActions: "Actions",
    one: "One", many: "Several", upTo: "Up to {n}", perLang: "Per language", allLangs: "All languages", yes: "Yes", no: "No",
    to: "to {types}", anyObject: "to any object", edit: "Edit", editNamed: "Edit {name}", remove: "Remove", removeNamed: "Remove {name} from the type",
    removeConfirm: "Remove “{name}” from this type? The attribute and the values stored for it are kept.", removeTitle: "Remove attribute", cancel: "Cancel", removed: "Attribute removed from the type.",
    saved: "Display-name attribute saved.", locked: "Locked",
  },
  de: {
    editType: "Typ bearbeiten", newAttr: "Neues Attribut", id: "ID", api: "ApiIdentifier", apiFixed: "Seit dem Anlegen fest: Clients sprechen den Typ unter diesem Namen an.",
    names: "Namen", noName: "—", systemTitle: "Systemtyp: schreibgeschützt",
    system: "Dieser Typ gehört zum CMS selbst. ID, ApiIdentifier und Attribute werden beim Start angelegt, und die Dienste verlassen sich darauf: Die API lehnt es ab, ihn zu löschen oder seinen ApiIdentifier zu ändern, daher bietet das Studio keine Änderungen an.",
    displayName: "Attribut für den Anzeigenamen", displayNameHint: "Dessen Wert benennt die Objekte des Typs in Listen und Verweisen.", byName: "Name (der eigene Name des Objekts)",
    attributes: "Attribute", noAttrs: "Noch keine Attribute. Fügen Sie das erste hinzu.", noAttrsSystem: "Das CMS definiert die Attribute dieses Typs; kein Formular des Branches listet sie.", noAttrsRead: "Noch keine Attribute.",
    colName: "Name", colApi: "ApiIdentifier", colType: "Datentyp", colValues: "Werte", colLang: "Sprache", colReq: "Pflicht", colActions: "Aktionen",
    one: "Einer", many: "Mehrere", upTo: "Bis zu {n}", perLang: "Je Sprache", allLangs: "Alle Sprachen", yes: "Ja", no: "Nein",
    to: "auf {types}", anyObject: "auf beliebige Objekte", edit: "Bearbeiten", editNamed: "{name} bearbeiten", remove: "Entfernen", removeNamed: "{name} vom Typ entfernen",
    removeConfirm: "„{name}“ von diesem Typ entfernen? Das Attribut und seine gespeicherten Werte bleiben erhalten.", removeTitle: "Attribut entfernen", cancel: "Abbrechen", removed: "Attribut vom Typ entfernt.",
    saved: "Attribut für den Anzeigenamen gespeichert.", locked: "Gesperrt",
  },
});

type Editing = { kind: "type" } | { kind: "attribute"; attribute?: AttributeDef } | { kind: "remove"; attribute: AttributeDef } | null;

export function TypePane(props: { branch: string; type: TypeDef; schema: BranchSchema; readOnly?: boolean; onChanged: () => void }) {
  const l = useStore(locale);
  const pref = uiLanguages(l);
  const [model, setModel] = useState<TypeModel | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reload, setReload] = useState(0);
  const [editing, setEditing] = useState<Editing>(null);
  const [dnError, setDnError] = useState<string | undefined>();
  useEffect(() => {
    setError(null);
    const ac = new AbortController();
    loadType(props.branch, String(props.type.id), ac.signal).then(setModel, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [props.branch, props.type.id, reload]);

  const t = model?.type ?? props.type;
  // A system type, or no write grant on the branch (the model view says why): no change offered.
  const ro = t.system || props.readOnly === true;
  // The grant removed while Remove asks: the question goes with the
  // buttons (its answer would be refused), and the notice says why.
  useEffect(() => {
    if (ro) setEditing((e) => (e?.kind === "remove" ? null : e));
  }, [ro]);
  const title = nameIn(t.names, pref, t.apiIdentifier ?? `#${t.id}`);
  const changed = () => {
    setReload((n) => n + 1);
    props.onChanged();
  };
  const attrName = (a: AttributeDef) => nameIn(a.names, pref, a.apiIdentifier ?? `#${a.id}`);
  const typeName = (id: number) => {
    const x = props.schema.types.find((y) => y.id === id);
    return x ? nameIn(x.names, pref, x.apiIdentifier ?? `#${id}`) : `#${id}`;
  };

  return (
    <Pane title={<>{t.system && <Lock />}{title}</>} label={title}
      actions={!ro && model && <>
        <Button onClick={() => setEditing({ kind: "type" })}>{m("editType")}</Button>
        <Button variant="primary" onClick={() => setEditing({ kind: "attribute" })}>{m("newAttr")}</Button>
      </>}>
      {props.readOnly && !t.system && <ModelReadOnly />}
      {t.system && (
        <div class="notice" role="note">
          <strong><Lock />{m("systemTitle")}</strong>
          <p>{m("system")}</p>
        </div>
      )}
      {error !== null && <Problem error={error} />}
      <dl class="props">
        <dt>{m("api")}</dt>
        <dd><code>{t.apiIdentifier ?? "—"}</code> <span class="field-hint"><Lock />{m("apiFixed")}</span></dd>
        <dt>{m("id")}</dt>
        <dd>{t.id}</dd>
        <dt>{m("names")}</dt>
        <dd>
          <ul class="names">
            {props.schema.languages.map((lg) => (
              <li key={lg.id}><span class="muted">{lg.name}:</span> <span lang={lg.code || undefined}>{t.names[lg.id] ?? m("noName")}</span></li>
            ))}
          </ul>
        </dd>
      </dl>
      {!model && error === null && <Skeleton lines={5} />}
      {model && (
        <>
          <div class="dn-field">
            <Field label={m("displayName")} for="type-dn" error={dnError} hint={m("displayNameHint")}>
              <select id="type-dn" disabled={ro} value={String(t.displayNameAttr ?? "")}
                aria-invalid={dnError ? true : undefined} aria-describedby={dnError ? "type-dn-error" : undefined}
                onChange={async (e) => {
                  const v = e.currentTarget.value;
                  setDnError(undefined);
                  try {
                    await setDisplayName(props.branch, t, v ? Number(v) : undefined);
                    toast(m("saved"));
                    changed();
                  } catch (err) {
                    setDnError(problemText(err));
                    e.currentTarget.value = String(t.displayNameAttr ?? "");
                  }
                }}>
                <option value="">{m("byName")}</option>
                {model.attributes.map((a) => <option key={a.id} value={String(a.id)}>{attrName(a)}</option>)}
                {t.displayNameAttr !== undefined && !model.attributes.some((a) => a.id === t.displayNameAttr) && (
                  <option value={String(t.displayNameAttr)}>#{t.displayNameAttr}</option>
                )}
              </select>
            </Field>
          </div>
          <h2 class="section-title">{m("attributes")}</h2>
          {model.attributes.length === 0 ? (
            <p class="muted">{t.system ? m("noAttrsSystem") : ro ? m("noAttrsRead") : m("noAttrs")}</p>
          ) : (
            <table class="attr-table">
              <caption class="visually-hidden">{m("attributes")}</caption>
              <thead>
                <tr>
                  <th scope="col">{m("colName")}</th><th scope="col">{m("colApi")}</th><th scope="col">{m("colType")}</th>
                  <th scope="col">{m("colValues")}</th><th scope="col">{m("colLang")}</th><th scope="col">{m("colReq")}</th>
                  {!ro && <th scope="col"><span class="visually-hidden">{m("colActions")}</span></th>}
                </tr>
              </thead>
              <tbody>
                {model.attributes.map((a) => (
                  <tr key={a.id} data-attribute={a.id}>
                    <th scope="row">{attrName(a)}{t.displayNameAttr === a.id && <span class="badge">{m("displayName")}</span>}</th>
                    <td><code>{a.apiIdentifier ?? "—"}</code></td>
                    <td>
                      {dataTypeLabel(a.dataType)}
                      {a.dataType === "ObjRef" && <div class="muted small">{a.refTypes.length ? m("to", { types: a.refTypes.map(typeName).join(", ") }) : m("anyObject")}</div>}
                    </td>
                    <td>{a.multi ? (a.maxValues > 0 ? m("upTo", { n: a.maxValues }) : m("many")) : m("one")}</td>
                    <td>{a.langDep ? m("perLang") : m("allLangs")}</td>
                    <td>{a.required ? m("yes") : m("no")}</td>
                    {!ro && (
                      <td class="row-actions">
                        {a.system ? <span class="muted small"><Lock />{m("locked")}</span> : (
                          <Button variant="ghost" aria-label={m("editNamed", { name: attrName(a) })} onClick={() => setEditing({ kind: "attribute", attribute: a })}>{m("edit")}</Button>
                        )}
                        <Button variant="ghost" aria-label={m("removeNamed", { name: attrName(a) })} onClick={() => setEditing({ kind: "remove", attribute: a })}>{m("remove")}</Button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
      {editing?.kind === "type" && (
        <TypeDialog branch={props.branch} languages={props.schema.languages} type={t} etag={model?.etag} onClose={() => setEditing(null)}
          onSaved={() => { setEditing(null); changed(); }} />
      )}
      {editing?.kind === "remove" && model && !ro && (
        <RemoveDialog name={attrName(editing.attribute)} onClose={() => setEditing(null)} onConfirm={async () => {
          await removeFromForms(props.branch, model, editing.attribute.id);
          toast(m("removed"));
          setEditing(null);
          changed();
        }} />
      )}
      {editing?.kind === "attribute" && model && (
        <AttributeDialog branch={props.branch} model={model} languages={props.schema.languages} types={props.schema.types} pref={pref}
          attribute={editing.attribute} onClose={() => setEditing(null)} onSaved={() => { setEditing(null); changed(); }} />
      )}
    </Pane>
  );
}

/** RemoveDialog asks before an attribute leaves the type; a refusal shows in it. */
function RemoveDialog(props: { name: string; onClose: () => void; onConfirm: () => Promise<void> }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <Dialog title={m("removeTitle")} onClose={props.onClose}
      footer={<>
        <Button onClick={props.onClose} autoFocus>{m("cancel")}</Button>
        <Button variant="danger" disabled={busy} onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            await props.onConfirm();
          } catch (e) {
            setError(e);
            setBusy(false);
          }
        }}>{m("remove")}</Button>
      </>}>
      {error !== null && <Problem error={error} />}
      <p>{m("removeConfirm", { name: props.name })}</p>
    </Dialog>
  );
}
