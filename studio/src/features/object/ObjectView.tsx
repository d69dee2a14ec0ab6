// The object editor (/studio/b/{branch}/content/{type}/{id}): the object's
// values per language side by side, each with where it comes from (set
// here, inherited from a branch, a fallback from a language) and "override
// here" / "back to inherited"; edits kept as a draft in this browser until
// saved; every save sends If-Match, a stale one opens the conflict view
// naming the other writer. A chosen variant's values show beside the
// values without variant; without a write grant on the branch everything
// is read-only and says why. Delete (asking first) and, for a deleted
// object (read-only until restored), Restore. Below the values, the
// object's comments; beside them, on demand, its preview (Preview.tsx, a
// lazy chunk).
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, OfflineError } from "../../api/client";
import { api } from "../../auth/session";
import {
  clearDraft, conflictFields, fieldMessage, type ConflictField, type Edit, type Edits, keyOf, loadDraft, patchRows, problemField, rowsByKey, saveDraft, valueOf,
} from "../../data/object";
import { markReadOnly } from "../../data/access";
import { provenance, type Source } from "../../data/provenance";
import { displayName } from "../../data/values";
import { formatDateTime, locale, messages } from "../../i18n/i18n";
import { setQuery, type Route } from "../../router";
import { uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import type { LiveChange } from "../../live/changes";
import { useBranchAccess } from "../../live/access";
import { useLiveObject } from "../../live/hooks";
import { ObjectNotice } from "../../live/ObjectNotice";
import { Button, Pane, Problem, Skeleton, problemText, toast } from "../../ui/ui";
import { type BadgeState, badgeText, showValue } from "./Badge";
import { Cell, type CellError, errorTarget, preloadFields } from "./Cell";
import { Comments } from "./Comments";
import { DeletedNotice, LifecycleAction } from "./Lifecycle";
import { ConflictView } from "./ConflictView";
import type { PreviewProps } from "./Preview";
import { listOf, rowOfProblem } from "./fields/list-model";
import type { AttributeInfo } from "./fields/registry";
import { loadObject, type Loaded, readLocal } from "./load";
import { objectReadOnlyText, ReadOnlyNotice } from "./ReadOnlyNotice";
import { chosenVariant, hasVariant, undeclared } from "./variants";
import { lastWriter, pickWriter, type Writer } from "./writer";
import "./object.css";

const m = messages({
  en: {
    object: "Object", save: "Save", saving: "Saving…", discard: "Discard changes", saved: "Saved.", unsaved: "Unsaved changes",
    restored: "Restored unsaved changes from {time}.", discardRestored: "Discard",
    offline: "No connection: your changes are kept in this browser. Save again when you are back online.",
    languages: "Languages", variant: "Variant", noVariant: "No variant (base values only)", fallbackValue: "Shown from {language}: {value}",
    baseValue: "Shown from the value without variant: {value}", variantLabel: "{field} — {variant}",
    notFound: "This object does not exist on this branch.",
    fieldError: "The server refused this value: {text}", empty: "This type has no attributes yet.", shortcut: "Ctrl+S saves",
    preview: "Preview", previewTitle: "Show this object rendered by a template beside the editor",
  },
  de: {
    object: "Objekt", save: "Speichern", saving: "Wird gespeichert…", discard: "Änderungen verwerfen", saved: "Gespeichert.", unsaved: "Ungespeicherte Änderungen",
    restored: "Ungespeicherte Änderungen vom {time} wiederhergestellt.", discardRestored: "Verwerfen",
    offline: "Keine Verbindung: Ihre Änderungen bleiben in diesem Browser erhalten. Speichern Sie erneut, sobald Sie wieder online sind.",
    languages: "Sprachen", variant: "Variante", noVariant: "Keine Variante (nur Grundwerte)", fallbackValue: "Angezeigt aus {language}: {value}",
    baseValue: "Angezeigt aus dem Wert ohne Variante: {value}", variantLabel: "{field} — {variant}",
    notFound: "Dieses Objekt gibt es auf diesem Branch nicht.",
    fieldError: "Der Server hat diesen Wert abgelehnt: {text}", empty: "Dieser Typ hat noch keine Attribute.", shortcut: "Strg+S speichert",
    preview: "Vorschau", previewTitle: "Dieses Objekt neben dem Editor mit einer Vorlage gerendert zeigen",
  },
});

type PreviewView = (p: PreviewProps) => preact.JSX.Element;
let previewChunk: Promise<PreviewView> | undefined;
/** loadPreview loads the preview's chunk once; a failed load (the connection dropped) is tried again next time. */
const loadPreview = () =>
  (previewChunk ??= import("./Preview").then(
    (mod) => mod.Preview,
    (e: unknown) => {
      previewChunk = undefined;
      throw e;
    },
  ));

const storage = () => (typeof localStorage === "undefined" ? null : localStorage);

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
  const [fieldErrors, setFieldErrors] = useState<Record<string, CellError>>({});
  const [conflict, setConflict] = useState<{ fields: ConflictField[]; etag: string | null; lastTransaction?: number | undefined } | null>(null);
  const [writer, setWriter] = useState<Writer | null>(null);
  const previewOpen = r.query.preview !== undefined;
  const [PreviewPane, setPreviewPane] = useState<{ View: PreviewView } | null>(null);
  const [previewError, setPreviewError] = useState<unknown>(null);
  useEffect(() => {
    if (!previewOpen || PreviewPane) return;
    setPreviewError(null); // opening again tries a failed load again
    loadPreview().then((View) => setPreviewPane({ View }), setPreviewError);
  }, [previewOpen]);
  // Kept current while the object is open: a grant removed meanwhile makes it read-only at once, with the reason.
  const access = useBranchAccess(branch);
  const readOnly = access.kind === "read";
  // A deleted object (as this branch shows it) is shown read-only until restored.
  const deleted = loaded?.effective.meta?.deleted === true;
  const locked = readOnly || deleted;
  // The latest change of the object by someone else the stream reported: who, should a save collide with it.
  const lastOther = useRef<LiveChange | undefined>(undefined);
  const openTx = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (!conflict) openTx.current = undefined;
  }, [conflict]);
  useLiveObject(branch, id, (c) => {
    if (c.own || c.kind === "reset") return;
    lastOther.current = c;
    // The conflict view is open and did not know the writer yet (the change reached the stream after the 412).
    if (openTx.current !== undefined) setWriter((w) => (w?.user ? w : pickWriter(openTx.current, undefined, undefined, c) ?? w));
  });

  const reload = useCallback(async (minVersion?: number, keepEdits = false) => {
    const got = await loadObject(branch, type, id, uiLanguages(l), minVersion);
    await preloadFields(got.attributes);
    setLoaded(got);
    if (!keepEdits) setEtag(got.etag);
    return got;
  }, [branch, type, id, l]);

  // The reads start while the view renders the first time (ObjectSlot keys
  // the view by object), not in an effect a frame later.
  const [first] = useState(() => loadObject(branch, type, id, uiLanguages(l)).then(async (got) => {
    await preloadFields(got.attributes);
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
    if (!loaded || saving || locked || Object.keys(toSave).length === 0) return;
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
      else if (e instanceof ApiError && e.status === 403) markReadOnly(branch, e.problem.detail); // the draft stays
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
    const text = m("fieldError", { text: e.problem.detail ? fieldMessage(e.problem.detail) : problemText(e) });
    const a = loaded?.attributes.find((x) => x.id === f.attr);
    const errs = keys.map((k): [string, CellError] => {
      const ed = toSave[k];
      const row = a?.multiple && ed?.kind === "set" && keys.length === 1 ? rowOfProblem(e.problem, listOf(ed.value)) : undefined;
      return [k, { text, row }];
    });
    setFieldErrors(Object.fromEntries(errs));
    const [k0, e0] = errs[0]!;
    const [, lg, v] = k0.split(":").map(Number);
    if (a) document.getElementById(errorTarget(a, lg ?? 0, v ?? 0, e0.row))?.focus();
    return true;
  };

  const openConflict = async (toSave: Edits) => {
    if (!loaded) return;
    const cur = await readLocal(branch, id);
    const tx = cur.object?.meta?.lastTransaction;
    setWriter(null);
    openTx.current = tx ?? 0;
    setConflict({ fields: conflictFields(toSave, loaded.local, cur.object, multiple), etag: cur.etag, lastTransaction: tx });
    void lastWriter(branch, Number(loaded.local.meta?.id ?? id), tx, lastOther.current).then((w) => setWriter((cur) => (cur?.user ? cur : w)));
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
  const pickedLangs = (r.query.langs ?? "").split(",").map(Number).filter((x) => langById.has(x));
  const shownLangs = pickedLangs.length > 0 ? pickedLangs : [uiLanguages(l).find((x) => langById.has(x)) ?? loaded.languages[0]?.id ?? 201];
  const variants = [...loaded.variants, ...undeclared(loaded.variants, loaded.effective, loaded.attributes)];
  const chosen = chosenVariant(variants, r.query.variant);
  const axes = [...new Map(variants.map((v) => [v.axis, v.axisName])).entries()];
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
  /** valueAt is the value a source shows: the fallback's language, the value without variant, or the group's own. */
  const valueAt = (s: Source, a: AttributeInfo, lang: number, variant: number): unknown => {
    if (s.kind === "base") return valueAt(s.from, a, lang, 0);
    if (s.kind === "fallback") return valueOf(effRows, keyOf(a.id, s.language, variant), a.multiple);
    return valueOf(effRows, keyOf(a.id, lang, variant), a.multiple);
  };
  const variantName = (v: number) => variants.find((x) => x.id === v)?.name ?? `#${v}`;

  const cell = (a: AttributeInfo, lang: number, variant: number) => {
    const k = keyOf(a.id, lang, variant);
    const e = edits[k];
    const src = prov.source(a.id, lang, variant, a.languageDependent);
    const plain = a.languageDependent ? `${a.name} (${langName(lang)})` : a.name;
    const label = variant ? m("variantLabel", { field: plain, variant: variantName(variant) }) : plain;
    const state: BadgeState = e ? (e.kind === "set" ? { kind: "edited" } : { kind: "toInherit" }) : src;
    const borrowed = src.kind === "fallback" || src.kind === "base";
    const shown = e ? (e.kind === "set" ? e.value : inheritedValue(k, a.multiple)) : borrowed ? undefined : valueAt(src, a, lang, variant);
    const hasInherited = child && inheritedValue(k, a.multiple) !== undefined;
    const hint = e ? undefined : src.kind === "fallback" ? m("fallbackValue", { language: langName(src.language), value: showValue(valueAt(src, a, lang, variant), a) })
      : src.kind === "base" ? m("baseValue", { value: showValue(valueAt(src, a, lang, variant), a) }) : undefined;
    return (
      <Cell key={k} attr={a} lang={lang} variant={variant} label={label} shown={shown} state={state} branch={branch} readOnly={locked}
        badge={badgeText(state, branchName, langName)}
        fallbackHint={hint}
        canOverride={!e && src.kind === "inherited"}
        canInherit={child && ((src.kind === "local" && !e) || (e?.kind === "set" && hasInherited))}
        error={fieldErrors[k]}
        onChange={(v) => setEdit(k, { kind: "set", value: v })}
        onOverride={() => setEdit(k, { kind: "set", value: valueAt(src, a, lang, variant) })}
        onInherit={() => setEdit(k, src.kind === "local" ? { kind: "inherit" } : undefined)} />
    );
  };

  return (
    <Pane title={name} label={name}
      actions={
        <>
          <span class={`save-state ${dirty ? "dirty" : ""}`} role="status">{saving ? m("saving") : dirty ? m("unsaved") : ""}</span>
          <Button onClick={discard} disabled={!dirty || saving}>{m("discard")}</Button>
          {!readOnly && (
            <LifecycleAction branch={branch} id={Number(loaded.local.meta?.id ?? id)} name={name} deleted={deleted} dirty={dirty}
              onDone={(tx) => void reload(tx || undefined)} />
          )}
          {!locked && <Button variant="primary" onClick={() => void save()} disabled={!dirty || saving} title={m("shortcut")}>{m("save")}</Button>}
        </>
      }>
      {restoredAt && (
        <div class="notice" role="status">
          <span>{m("restored", { time: formatDateTime(restoredAt) })}</span>
          <Button onClick={discard}>{m("discardRestored")}</Button>
        </div>
      )}
      {offline && <div class="notice notice-warn" role="alert">{m("offline")}</div>}
      {deleted && <DeletedNotice canRestore={!readOnly} />}
      {access.kind === "read" && (
        <ReadOnlyNotice revoked={access.revoked} by={access.by} detail={access.detail}>
          {objectReadOnlyText(access, loaded.branchNames.get(Number(branch)) ?? branch, dirty)}
        </ReadOnlyNotice>
      )}
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
        {variants.length > 0 && (
          <label class="topbar-field">
            <span>{m("variant")}</span>
            <select id="variant-picker" class="input" value={String(chosen?.id ?? 0)} onChange={(ev) => setQuery({ variant: ev.currentTarget.value === "0" ? undefined : ev.currentTarget.value })}>
              <option value="0">{m("noVariant")}</option>
              {axes.map(([axis, axisName]) => (
                <optgroup key={axis} label={axisName || "—"}>
                  {variants.filter((v) => v.axis === axis).map((v) => <option key={v.id} value={String(v.id)}>{v.name}</option>)}
                </optgroup>
              ))}
            </select>
          </label>
        )}
        <Button aria-pressed={previewOpen} title={m("previewTitle")}
          onClick={() => setQuery(previewOpen ? { preview: undefined, previewLang: undefined } : { preview: "on" })}>{m("preview")}</Button>
      </div>
      <div class={`object-main ${previewOpen ? "with-preview" : ""}`}>
      <div class="object-values">
      {loaded.attributes.length === 0 ? <p class="muted">{m("empty")}</p> : (
        <div class="object-form" style={{ "--cols": String(shownLangs.length) }} data-ready="true">
          <div class="form-head" aria-hidden="true">
            {shownLangs.map((x) => <div key={x} class="lang-head">{langById.get(x)?.name ?? langName(x)}</div>)}
          </div>
          {loaded.attributes.map((a) => {
            const langs = a.languageDependent ? shownLangs : [0];
            const withVariant = chosen && hasVariant(a, chosen);
            return (
              <div key={a.id} class={`form-group ${withVariant ? "with-variant" : ""}`} role="group" aria-label={a.name}>
                <div class={`form-row ${a.languageDependent ? "" : "span"}`}>{langs.map((x) => cell(a, x, 0))}</div>
                {withVariant && <div class={`form-row variant-row ${a.languageDependent ? "" : "span"}`}>{langs.map((x) => cell(a, x, chosen.id))}</div>}
              </div>
            );
          })}
        </div>
      )}
      <Comments branch={branch} branchId={loaded.chain[0]?.branch ?? Number(branch)} objectId={Number(loaded.local.meta?.id ?? id)} readOnly={readOnly} />
      </div>
      {previewOpen && previewError !== null && <Problem error={previewError} />}
      {previewOpen && PreviewPane && (
        <PreviewPane.View branch={branch} objectId={Number(loaded.local.meta?.id ?? id)} objectName={name}
          version={Number(loaded.effective.meta?.lastTransaction ?? 0)} languages={loaded.languages} shownLanguages={shownLangs} query={r.query} />
      )}
      </div>
      {conflict && (
        <ConflictView fields={conflict.fields} attributes={loaded.attributes} languageName={langName} variantName={variantName}
          lastTransaction={conflict.lastTransaction} writer={writer}
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
