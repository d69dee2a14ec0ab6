// The object editor (/studio/b/{branch}/content/{type}/{id}): the object's
// values per language side by side, each with where it comes from (set
// here, inherited from a branch, a fallback from a language) and "override
// here" / "back to inherited"; edits kept as a draft in this browser until
// saved; every save sends If-Match, a stale one opens the conflict view.
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, OfflineError } from "../../api/client";
import { api } from "../../auth/session";
import {
  clearDraft, conflictFields, fieldMessage, type ConflictField, type Edit, type Edits, keyOf, loadDraft, patchRows, problemField, rowsByKey, saveDraft, valueOf,
} from "../../data/object";
import { provenance, type Source } from "../../data/provenance";
import { displayName } from "../../data/values";
import { formatDateTime, locale, messages } from "../../i18n/i18n";
import { setQuery, type Route } from "../../router";
import { uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { ObjectNotice } from "../../live/ObjectNotice";
import { Button, Field, Pane, Problem, Skeleton, problemText, toast } from "../../ui/ui";
import { Badge, type BadgeState, badgeText, showValue } from "./Badge";
import { ConflictView } from "./ConflictView";
import "./fields/all";
import { type AttributeInfo, type FieldComponent, fieldFor } from "./fields/registry";
import { loadObject, type Loaded, readLocal } from "./load";
import "./object.css";

const m = messages({
  en: {
    object: "Object", save: "Save", saving: "Saving…", discard: "Discard changes", saved: "Saved.", unsaved: "Unsaved changes",
    restored: "Restored unsaved changes from {time}.", discardRestored: "Discard",
    offline: "No connection: your changes are kept in this browser. Save again when you are back online.",
    languages: "Languages", variant: "Variant", noVariant: "No variant", override: "Override here", inherit: "Back to inherited",
    overrideFor: "Override here: {field}", inheritFor: "Back to inherited: {field}", fallbackValue: "Shown from {language}: {value}",
    noInput: "No input for the data type {type} yet; the value is shown as stored.", notFound: "This object does not exist on this branch.",
    fieldError: "The server refused this value: {text}", empty: "This type has no attributes yet.", shortcut: "Ctrl+S saves",
  },
  de: {
    object: "Objekt", save: "Speichern", saving: "Wird gespeichert…", discard: "Änderungen verwerfen", saved: "Gespeichert.", unsaved: "Ungespeicherte Änderungen",
    restored: "Ungespeicherte Änderungen vom {time} wiederhergestellt.", discardRestored: "Verwerfen",
    offline: "Keine Verbindung: Ihre Änderungen bleiben in diesem Browser erhalten. Speichern Sie erneut, sobald Sie wieder online sind.",
    languages: "Sprachen", variant: "Variante", noVariant: "Keine Variante", override: "Hier überschreiben", inherit: "Zurück zum geerbten Wert",
    overrideFor: "Hier überschreiben: {field}", inheritFor: "Zurück zum geerbten Wert: {field}", fallbackValue: "Angezeigt aus {language}: {value}",
    noInput: "Noch keine Eingabe für den Datentyp {type}; der Wert wird wie gespeichert gezeigt.", notFound: "Dieses Objekt gibt es auf diesem Branch nicht.",
    fieldError: "Der Server hat diesen Wert abgelehnt: {text}", empty: "Dieser Typ hat noch keine Attribute.", shortcut: "Strg+S speichert",
  },
});

const storage = () => (typeof localStorage === "undefined" ? null : localStorage);

/** useField resolves the registered input of a data type (null while loading or when none takes it). */
const loadedFields = new Map<string, FieldComponent | null>();
function useFieldComponent(dataType: string): FieldComponent | null | undefined {
  // Components are functions: useState and its setter would call them, so they are wrapped.
  const [c, setC] = useState<FieldComponent | null | undefined>(() => loadedFields.get(dataType));
  useEffect(() => {
    if (loadedFields.has(dataType)) return setC(() => loadedFields.get(dataType));
    const load = fieldFor(dataType);
    if (!load) {
      loadedFields.set(dataType, null);
      return setC(null);
    }
    let live = true;
    load().then((f) => { loadedFields.set(dataType, f); if (live) setC(() => f); }, () => live && setC(null));
    return () => { live = false; };
  }, [dataType]);
  return c;
}

/**
 * preloadFields resolves the inputs of the data types before the form is
 * shown, so the first render has them (an effect would wait for a frame).
 */
async function preloadFields(dataTypes: string[]): Promise<void> {
  await Promise.all([...new Set(dataTypes)].filter((dt) => !loadedFields.has(dt)).map(async (dt) => {
    const load = fieldFor(dt);
    loadedFields.set(dt, load ? await load().catch(() => null) : null);
  }));
}

function RawInput(p: { id: string; value: unknown }) {
  const text = p.value === undefined ? "" : JSON.stringify(p.value);
  return <input class="input" id={p.id} readOnly value={text} />;
}

/** title names the object: its name, else its first text in the preferred languages, else "#id". */
function title(o: Loaded, preferred: readonly number[]): string {
  const n = displayName(o.effective, preferred);
  if (!n.startsWith("#")) return n;
  for (const lg of [...preferred, 0]) {
    for (const a of o.attributes) {
      if (a.dataType !== "String") continue;
      const v = (o.effective.values ?? []).find((x) => x.attribute === a.id && (x.language ?? 0) === lg)?.value;
      if (typeof v === "string" && v.trim() !== "") return v;
    }
  }
  return n;
}

interface CellProps {
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
  error?: string | undefined;
  branch: string;
  onChange: (v: unknown) => void;
  onOverride: () => void;
  onInherit: () => void;
}

function Cell(p: CellProps) {
  const Input = useFieldComponent(p.attr.dataType);
  const id = `f-${p.attr.id}-${p.lang}-${p.variant}`;
  const errId = `${id}-error`;
  return (
    <div class={`cell cell-${p.state.kind}`} data-key={keyOf(p.attr.id, p.lang, p.variant)}>
      <Field label={p.label + (p.attr.required ? " *" : "")} for={id} error={p.error}
        hint={
          <span class="cell-meta">
            <Badge state={p.state} text={p.badge} />
            {p.fallbackHint && <span class="fallback-value">{p.fallbackHint}</span>}
            {p.canOverride && <Button variant="ghost" class="btn-small" aria-label={m("overrideFor", { field: p.label })} onClick={p.onOverride}>{m("override")}</Button>}
            {p.canInherit && <Button variant="ghost" class="btn-small" aria-label={m("inheritFor", { field: p.label })} onClick={p.onInherit}>{m("inherit")}</Button>}
          </span>
        }>
        {Input === undefined ? <div class="skeleton-line" aria-hidden="true" /> : Input === null ? (
          <>
            <RawInput id={id} value={p.shown} />
            <div class="field-hint">{m("noInput", { type: p.attr.dataType || "?" })}</div>
          </>
        ) : (
          <Input id={id} label={p.label} attr={p.attr} branch={p.branch} value={p.shown} onChange={p.onChange}
            invalid={!!p.error} describedBy={p.error ? errId : undefined} />
        )}
      </Field>
    </div>
  );
}

export function ObjectView({ route: r }: { route: Route }) {
  const l = useStore(locale);
  const branch = r.branch ?? "";
  const id = r.object ?? "";
  const type = r.type ?? "";
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [edits, setEdits] = useState<Edits>({});
  const [etag, setEtag] = useState<string | null>(null);
  const [restoredAt, setRestoredAt] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [offline, setOffline] = useState(false);
  const [saveError, setSaveError] = useState<unknown>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [conflict, setConflict] = useState<{ fields: ConflictField[]; etag: string | null; lastTransaction?: number | undefined } | null>(null);

  const reload = useCallback(async (minVersion?: number, keepEdits = false) => {
    const got = await loadObject(branch, type, id, uiLanguages(l), minVersion);
    await preloadFields(got.attributes.map((a) => a.dataType));
    setLoaded(got);
    if (!keepEdits) setEtag(got.etag);
    return got;
  }, [branch, type, id, l]);

  // The reads start while the view renders the first time (ObjectSlot keys
  // the view by object), not in an effect a frame later.
  const [first] = useState(() => loadObject(branch, type, id, uiLanguages(l)).then(async (got) => {
    await preloadFields(got.attributes.map((a) => a.dataType));
    return got;
  }));
  useEffect(() => {
    let live = true;
    first.then((got) => {
      if (!live) return;
      setLoaded(got);
      const s = storage();
      const d = s && loadDraft(s, branch, id);
      if (d) {
        setEdits(d.edits);
        setEtag(d.etag ?? got.etag);
        setRestoredAt(d.savedAt);
      } else setEtag(got.etag);
    }, (e) => live && setError(e));
    return () => { live = false; };
  }, [first]);

  const multiple = useCallback((a: number) => loaded?.attributes.find((x) => x.id === a)?.multiple ?? false, [loaded]);
  const prov = useMemo(() => loaded && provenance(loaded.chain, new Map(loaded.languages.map((x) => [x.id, x.fallback]))), [loaded]);
  const effRows = useMemo(() => rowsByKey(loaded?.effective), [loaded]);

  const writeEdits = (next: Edits, tag = etag) => {
    setEdits(next);
    const s = storage();
    if (s) saveDraft(s, branch, id, { savedAt: new Date().toISOString(), etag: tag, edits: next });
  };
  const setEdit = (k: string, e: Edit | undefined) => {
    const next = { ...edits };
    if (e) next[k] = e;
    else delete next[k];
    setFieldErrors(({ [k]: _, ...rest }) => rest);
    writeEdits(next);
  };
  const discard = () => {
    const s = storage();
    if (s) clearDraft(s, branch, id);
    setEdits({});
    setRestoredAt(null);
    setFieldErrors({});
    setSaveError(null);
    setOffline(false);
    setEtag(loaded?.etag ?? null);
  };

  const save = async (toSave: Edits = edits, tag: string | null = etag) => {
    if (!loaded || saving || Object.keys(toSave).length === 0) return;
    setSaving(true);
    setSaveError(null);
    setFieldErrors({});
    try {
      const values = patchRows(toSave, multiple);
      const { data } = await api.call("management", "UpdateObjects", { branch },
        { objects: [{ meta: { id: loaded.local.meta?.id ?? Number(id) }, values }] }, { ifMatch: tag ?? "*" });
      const s = storage();
      if (s) clearDraft(s, branch, id);
      setEdits({});
      setRestoredAt(null);
      setOffline(false);
      setConflict(null);
      toast(m("saved"));
      await reload(data.transaction?.id);
    } catch (e) {
      if (e instanceof OfflineError) setOffline(true);
      else if (e instanceof ApiError && e.status === 412) await openConflict(toSave);
      else if (e instanceof ApiError && (e.status === 400 || e.status === 422) && placeError(e, toSave)) { /* shown at the field */ }
      else setSaveError(e);
    } finally {
      setSaving(false);
    }
  };

  const placeError = (e: ApiError, toSave: Edits): boolean => {
    const f = problemField(e.problem);
    if (!f) return false;
    const keys = Object.keys(toSave).filter((k) => {
      const [a, lg, v] = k.split(":").map(Number);
      return a === f.attr && (f.lang === undefined || lg === f.lang) && (f.variant === undefined || v === f.variant);
    });
    if (keys.length === 0) return false;
    const text = e.problem.detail ? fieldMessage(e.problem.detail) : problemText(e);
    setFieldErrors(Object.fromEntries(keys.map((k) => [k, m("fieldError", { text })])));
    document.getElementById(`f-${keys[0]!.split(":").join("-")}`)?.focus();
    return true;
  };

  const openConflict = async (toSave: Edits) => {
    if (!loaded) return;
    const cur = await readLocal(branch, id);
    setConflict({ fields: conflictFields(toSave, loaded.local, cur.object, multiple), etag: cur.etag, lastTransaction: cur.object?.meta?.lastTransaction });
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
        e.preventDefault();
        void save();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });


  if (error) {
    return (
      <Pane title={m("object")}>
        {error instanceof ApiError && error.status === 404 ? <p class="muted">{m("notFound")}</p> : <Problem error={error} />}
      </Pane>
    );
  }
  if (!loaded || !prov) {
    return <Pane title={m("object")}><div aria-busy="true"><Skeleton lines={8} /></div></Pane>;
  }

  const langById = new Map(loaded.languages.map((x) => [x.id, x]));
  const langName = (lid: number) => langById.get(lid)?.code ?? `#${lid}`;
  const branchName = (b: number) => loaded.branchNames.get(b) ?? `#${b}`;
  const chosen = (r.query.langs ?? "").split(",").map(Number).filter((x) => langById.has(x));
  const shownLangs = chosen.length > 0 ? chosen : [uiLanguages(l).find((x) => langById.has(x)) ?? loaded.languages[0]?.id ?? 201];
  const variants = [...new Set((loaded.effective.values ?? []).map((v) => v.variant ?? 0))].sort((a, b) => a - b);
  const variant = Number(r.query.variant ?? 0) || 0;
  const child = loaded.chain.length > 1;
  const dirty = Object.keys(edits).length > 0;
  const name = title(loaded, uiLanguages(l));

  const inheritedValue = (k: string, multi: boolean): unknown => {
    for (const c of loaded.chain.slice(1)) {
      const v = valueOf(rowsByKey(c.object), k, multi);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const valueAt = (s: Source, a: AttributeInfo, lang: number): unknown => {
    if (s.kind === "fallback") return valueOf(effRows, keyOf(a.id, s.language, variant), a.multiple);
    return valueOf(effRows, keyOf(a.id, lang, variant), a.multiple);
  };

  const cell = (a: AttributeInfo, lang: number) => {
    const k = keyOf(a.id, lang, variant);
    const e = edits[k];
    const src = prov.source(a.id, lang, variant, a.languageDependent);
    const label = a.languageDependent ? `${a.name} (${langName(lang)})` : a.name;
    const state: BadgeState = e ? (e.kind === "set" ? { kind: "edited" } : { kind: "toInherit" }) : src;
    const shown = e ? (e.kind === "set" ? e.value : inheritedValue(k, a.multiple)) : src.kind === "fallback" ? undefined : valueAt(src, a, lang);
    const hasInherited = child && inheritedValue(k, a.multiple) !== undefined;
    return (
      <Cell key={k} attr={a} lang={lang} variant={variant} label={label} shown={shown} state={state} branch={branch}
        badge={badgeText(state, branchName, langName)}
        fallbackHint={!e && src.kind === "fallback" ? m("fallbackValue", { language: langName(src.language), value: showValue(valueAt(src, a, lang), a) }) : undefined}
        canOverride={!e && src.kind === "inherited"}
        canInherit={child && ((src.kind === "local" && !e) || (e?.kind === "set" && hasInherited))}
        error={fieldErrors[k]}
        onChange={(v) => setEdit(k, { kind: "set", value: v })}
        onOverride={() => setEdit(k, { kind: "set", value: valueAt(src, a, lang) })}
        onInherit={() => setEdit(k, src.kind === "local" ? { kind: "inherit" } : undefined)} />
    );
  };

  return (
    <Pane title={name} label={name}
      actions={
        <>
          <span class={`save-state ${dirty ? "dirty" : ""}`} role="status">{saving ? m("saving") : dirty ? m("unsaved") : ""}</span>
          <Button onClick={discard} disabled={!dirty || saving}>{m("discard")}</Button>
          <Button variant="primary" onClick={() => void save()} disabled={!dirty || saving} title={m("shortcut")}>{m("save")}</Button>
        </>
      }>
      {restoredAt && (
        <div class="notice" role="status">
          <span>{m("restored", { time: formatDateTime(restoredAt) })}</span>
          <Button onClick={discard}>{m("discardRestored")}</Button>
        </div>
      )}
      {offline && <div class="notice notice-warn" role="alert">{m("offline")}</div>}
      {/* Others' saves: reloads by itself without edits, else asks (never overwrites unsaved edits). */}
      <ObjectNotice branch={branch} id={loaded.local.meta?.id ?? id} dirty={dirty} onShowChanges={() => void openConflict(edits)}
        onReload={() => {
          if (dirty) discard();
          void reload();
        }} />
      {saveError !== null && <Problem error={saveError} />}
      <div class="object-toolbar">
        <fieldset class="lang-picker">
          <legend>{m("languages")}</legend>
          {loaded.languages.map((x) => (
            <label key={x.id} class="chip">
              <input type="checkbox" checked={shownLangs.includes(x.id)}
                onChange={(ev) => {
                  const next = ev.currentTarget.checked ? [...shownLangs, x.id] : shownLangs.filter((y) => y !== x.id);
                  setQuery({ langs: next.length ? loaded.languages.map((y) => y.id).filter((y) => next.includes(y)).join(",") : undefined });
                }} />
              <span title={x.name}>{x.code}</span>
            </label>
          ))}
        </fieldset>
        {variants.length > 1 && (
          <label class="topbar-field">
            <span>{m("variant")}</span>
            <select class="input" value={String(variant)} onChange={(ev) => setQuery({ variant: ev.currentTarget.value === "0" ? undefined : ev.currentTarget.value })}>
              {variants.map((v) => <option key={v} value={String(v)}>{v === 0 ? m("noVariant") : `#${v}`}</option>)}
            </select>
          </label>
        )}
      </div>
      {loaded.attributes.length === 0 ? <p class="muted">{m("empty")}</p> : (
        <div class="object-form" style={{ "--cols": String(shownLangs.length) }} data-ready="true">
          <div class="form-head" aria-hidden="true">
            {shownLangs.map((x) => <div key={x} class="lang-head">{langById.get(x)?.name ?? langName(x)}</div>)}
          </div>
          {loaded.attributes.map((a) => (
            <div key={a.id} class={`form-row ${a.languageDependent ? "" : "span"}`} role="group" aria-label={a.name}>
              {a.languageDependent ? shownLangs.map((x) => cell(a, x)) : cell(a, 0)}
            </div>
          ))}
        </div>
      )}
      {conflict && (
        <ConflictView fields={conflict.fields} attributes={loaded.attributes} languageName={langName} lastTransaction={conflict.lastTransaction}
          onCancel={() => setConflict(null)}
          onResolve={(resolved) => {
            const tag = conflict.etag;
            setConflict(null);
            setEtag(tag);
            writeEdits(resolved, tag);
            if (Object.keys(resolved).length === 0) {
              discard();
              void reload();
            } else void save(resolved, tag);
          }} />
      )}
    </Pane>
  );
}
