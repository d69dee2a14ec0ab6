// Content: the branch's types in the rail, the chosen type's objects, the
// open object.
import { useEffect, useState } from "preact/hooks";
import { loadTypes, type TypeInfo } from "../../data/types";
import { locale, messages } from "../../i18n/i18n";
import { navigate, type Route } from "../../router";
import { Shell, uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Pane, Problem, Skeleton } from "../../ui/ui";
import { ObjectSlot } from "../object/ObjectSlot";
import "./content.css";
import { ContentList } from "./list/ContentList";

const m = messages({
  en: { types: "Content types", none: "This branch has no content types yet. Create one in the model.", choose: "Choose a content type.", content: "Content", unknownType: "This branch has no content type “{type}”." },
  de: { types: "Inhaltstypen", none: "Dieser Branch hat noch keine Inhaltstypen. Legen Sie einen im Modell an.", choose: "Wählen Sie einen Inhaltstyp.", content: "Inhalte", unknownType: "Dieser Branch hat keinen Inhaltstyp „{type}“." },
});

export function TypeNav(props: { route: Route; types: TypeInfo[] | null; error: unknown }) {
  const { route: r, types } = props;
  if (props.error) return <Problem error={props.error} />;
  if (!types) return <Skeleton lines={6} />;
  if (types.length === 0) return <p class="muted">{m("none")}</p>;
  return (
    <ul class="type-nav" aria-label={m("types")}>
      {types.map((t) => {
        const key = t.apiIdentifier ?? String(t.id);
        const current = r.type === key || r.type === String(t.id);
        return (
          <li key={t.id}>
            <a href={`/studio/b/${encodeURIComponent(r.branch ?? "")}/${r.section}/${encodeURIComponent(key)}`}
              aria-current={current ? "page" : undefined}
              onClick={(e) => {
                e.preventDefault();
                navigate({ branch: r.branch, section: r.section, type: key, query: {} });
              }}>
              {t.name}
            </a>
          </li>
        );
      })}
    </ul>
  );
}

export function useTypes(branch: string | undefined) {
  const l = useStore(locale);
  const [types, setTypes] = useState<TypeInfo[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!branch) return;
    setTypes(null);
    setError(null);
    const ac = new AbortController();
    loadTypes(branch, uiLanguages(l), ac.signal).then(setTypes, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [branch, l]);
  return { types, error };
}

export function ContentView({ route: r }: { route: Route }) {
  const { types, error } = useTypes(r.branch);
  const current = types?.find((t) => t.apiIdentifier === r.type || String(t.id) === r.type);
  return (
    <Shell nav={<TypeNav route={r} types={types} error={error} />}>
      {r.object && r.type ? <ObjectSlot route={r} />
        : current ? <ContentList key={`${r.branch}/${current.id}`} route={r} type={current} />
        : (
          <Pane title={m("content")}>
            {r.type && types ? <p class="muted">{m("unknownType", { type: r.type })}</p>
              : r.type && !error ? <Skeleton lines={8} /> : <p class="muted">{m("choose")}</p>}
          </Pane>
        )}
    </Shell>
  );
}
