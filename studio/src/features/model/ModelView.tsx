// The model: the branch's types in the rail (custom ones, then the system
// types, read-only), the chosen type with its attributes in the work area,
// and the dialogs that create and change types and attributes. Without a
// write grant on the branch the model is read-only and says why (no New
// type, no changes offered; kept current like the object editor's).
import { useEffect, useState } from "preact/hooks";
import { useBranchAccess } from "../../live/access";
import { loadSchema, nameIn, type BranchSchema, type TypeDef } from "../../data/model";
import { locale, messages } from "../../i18n/i18n";
import { navigate, type Route } from "../../router";
import { Shell, uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Pane, Problem, Skeleton, Lock } from "../../ui/ui";
import { ModelReadOnly } from "./ModelReadOnly";
import { TypeDialog } from "./TypeDialog";
import { TypePane } from "./TypePane";
import "./model.css";

const m = messages({
  en: {
    model: "Model",
    types: "Types",
    newType: "New type",
    system: "System types ({n})",
    systemHint: "System type (read-only)",
    none: "No types yet.",
    choose: "Choose a type to see its attributes, or create one.",
    emptyTitle: "Start the model",
    empty: "A type describes a kind of content (an article, a product) by its attributes. Create the first one.",
    notFound: "This branch has no type “{t}”.",
    chooseRead: "Choose a type to see its attributes.",
  },
  de: {
    model: "Modell",
    types: "Typen",
    newType: "Neuer Typ",
    system: "Systemtypen ({n})",
    systemHint: "Systemtyp (schreibgeschützt)",
    none: "Noch keine Typen.",
    choose: "Wählen Sie einen Typ, um seine Attribute zu sehen, oder legen Sie einen an.",
    emptyTitle: "Das Modell beginnen",
    empty: "Ein Typ beschreibt eine Art von Inhalt (einen Artikel, ein Produkt) durch seine Attribute. Legen Sie den ersten an.",
    notFound: "Dieser Branch hat keinen Typ „{t}“.",
    chooseRead: "Wählen Sie einen Typ, um seine Attribute zu sehen.",
  },
});

export function typeKey(t: TypeDef): string {
  return t.apiIdentifier ?? String(t.id);
}

export function ModelView({ route: r }: { route: Route }) {
  const l = useStore(locale);
  const pref = uiLanguages(l);
  const [schema, setSchema] = useState<BranchSchema | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reload, setReload] = useState(0);
  const [creating, setCreating] = useState(false);
  const readOnly = useBranchAccess(r.branch ?? "").kind === "read";
  useEffect(() => {
    if (!r.branch) return;
    setError(null);
    const ac = new AbortController();
    loadSchema(r.branch, pref, ac.signal).then(setSchema, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [r.branch, l, reload]);
  const sorted = (ts: TypeDef[]) => ts.slice().sort((a, b) => nameIn(a.names, pref, "").localeCompare(nameIn(b.names, pref, "")) || a.id - b.id);
  const custom = sorted(schema?.types.filter((t) => !t.system) ?? []);
  const system = sorted(schema?.types.filter((t) => t.system) ?? []);
  const current = schema?.types.find((t) => typeKey(t) === r.type || String(t.id) === r.type);
  const open = (t: TypeDef) => navigate({ branch: r.branch, section: "model", type: typeKey(t), query: {} });

  const nav = (
    <div class="model-nav">
      <div class="model-nav-head">
        <h2 class="rail-title">{m("types")}</h2>
        {!readOnly && <Button variant="primary" onClick={() => setCreating(true)} disabled={!schema}>{m("newType")}</Button>}
      </div>
      {error !== null && <Problem error={error} />}
      {!schema && error === null && <Skeleton lines={6} />}
      {schema && (
        <>
          {custom.length === 0 && <p class="muted">{m("none")}</p>}
          <TypeList branch={r.branch} types={custom} pref={pref} label={m("types")} current={current?.id} onOpen={open} />
          <details class="model-system" open={current?.system}>
            <summary>{m("system", { n: system.length })}</summary>
            <TypeList branch={r.branch} types={system} pref={pref} label={m("system", { n: system.length })} current={current?.id} onOpen={open} locked={m("systemHint")} />
          </details>
        </>
      )}
    </div>
  );

  return (
    <Shell nav={nav}>
      {r.branch && current ? (
        <TypePane key={`${r.branch}/${current.id}`} branch={r.branch} type={current} schema={schema!} readOnly={readOnly} onChanged={() => setReload((n) => n + 1)} />
      ) : (
        <Pane title={m("model")}>
          {readOnly && <ModelReadOnly />}
          {!schema && error === null && <Skeleton lines={4} />}
          {schema && r.type && !current && <div class="problem" role="alert">{m("notFound", { t: r.type })}</div>}
          {schema && custom.length === 0 ? (
            <div class="empty-state">
              <h2>{m("emptyTitle")}</h2>
              {!readOnly && <p>{m("empty")}</p>}
              {!readOnly && <Button variant="primary" onClick={() => setCreating(true)}>{m("newType")}</Button>}
            </div>
          ) : (
            schema && <p class="muted">{m(readOnly ? "chooseRead" : "choose")}</p>
          )}
        </Pane>
      )}
      {creating && !readOnly && schema && r.branch && (
        <TypeDialog branch={r.branch} languages={schema.languages} onClose={() => setCreating(false)}
          onSaved={(id, api) => {
            setCreating(false);
            setReload((n) => n + 1);
            navigate({ branch: r.branch, section: "model", type: api || String(id), query: {} });
          }} />
      )}
    </Shell>
  );
}

function TypeList(p: { branch: string | undefined; types: TypeDef[]; pref: number[]; label: string; current: number | undefined; onOpen: (t: TypeDef) => void; locked?: string }) {
  return (
    <ul class="type-nav" aria-label={p.label}>
      {p.types.map((t) => {
        const key = typeKey(t);
        return (
          <li key={t.id}>
            <a href={`/studio/b/${encodeURIComponent(p.branch ?? "")}/model/${encodeURIComponent(key)}`}
              aria-current={p.current === t.id ? "page" : undefined}
              title={p.locked}
              onClick={(e) => {
                e.preventDefault();
                p.onOpen(t);
              }}>
              {p.locked && <Lock />}
              {nameIn(t.names, p.pref, key)}
              {p.locked && <span class="visually-hidden">, {p.locked}</span>}
            </a>
          </li>
        );
      })}
    </ul>
  );
}
