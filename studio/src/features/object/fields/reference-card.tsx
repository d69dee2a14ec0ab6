// The reference card: what a reference shows of the object it names
// (thumbnail for binary proxy objects, name, type, id), and the hooks it
// is made of.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { locale } from "../../../i18n/i18n";
import { uiLanguages } from "../../../shell/Shell";
import { useStore } from "../../../store";
import { Problem } from "../../../ui/ui";
import { m } from "./reference-messages";
import { isBinary } from "./reference-model";
import { type RefInfo, refInfo, thumbnail } from "./refs";
import type { AttributeInfo } from "./registry";

/** useRefInfo loads what a card shows of id; undefined while loading. */
export function useRefInfo(branch: string, id: number | undefined) {
  const l = useStore(locale);
  const [state, setState] = useState<{ id?: number; info?: RefInfo | null; error?: unknown }>({});
  useEffect(() => {
    if (id === undefined) return;
    let live = true;
    setState({ id });
    refInfo(branch, id, uiLanguages(l)).then((info) => live && setState({ id, info }), (error) => live && setState({ id, error }));
    return () => {
      live = false;
    };
  }, [branch, id, l]);
  return state.id === id ? state : {};
}

/** Thumb is a binary proxy object's thumbnail, fetched with the token and shown as a blob: URL. */
export function Thumb(props: { branch: string; id: number; size?: number }) {
  const size = props.size ?? 48;
  const [url, setUrl] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    const ac = new AbortController();
    let made: string | null = null;
    setUrl(undefined);
    thumbnail(props.branch, props.id, size * 2, ac.signal).then(
      (u) => {
        made = u;
        if (ac.signal.aborted) u && URL.revokeObjectURL(u);
        else setUrl(u);
      },
      () => !ac.signal.aborted && setUrl(null),
    );
    return () => {
      ac.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [props.branch, props.id, size]);
  const cls = `ref-thumb ref-thumb-${size}`;
  if (url === undefined) return <span class={`${cls} ref-thumb-loading`} aria-hidden="true" />;
  if (url === null) return <span class={`${cls} ref-thumb-none`} aria-hidden="true">🗎</span>;
  return <img class={cls} src={url} alt="" width={size} height={size} onLoad={(e) => (e.currentTarget.dataset.loaded = "true")} />;
}

/** RefCard shows the referenced object: thumbnail, name, type, id, and the card's actions. */
export function RefCard(props: { branch: string; id: number; attr: AttributeInfo; children?: ComponentChildren }) {
  const { info, error } = useRefInfo(props.branch, props.id);
  const type = useRefInfo(props.branch, info?.typeRef);
  const loading = info === undefined && !error;
  return (
    <div class={`ref-card ${info === null || info?.deleted ? "ref-card-missing" : ""}`}>
      {isBinary(props.attr.dataType) && <Thumb branch={props.branch} id={props.id} />}
      <div class="ref-text">
        {loading ? (
          <span class="ref-name ref-loading">{m("loading")}</span>
        ) : error ? (
          <Problem error={error} />
        ) : info === null ? (
          <span class="ref-name">{m("missing", { id: props.id })}</span>
        ) : (
          <a class="ref-name" href={`/studio/b/${encodeURIComponent(props.branch)}/content/${info?.typeRef ?? ""}/${props.id}`}>
            {info?.name}
          </a>
        )}
        <span class="ref-meta">
          {info?.typeRef !== undefined &&
            (type.info ? <span key="type" class="ref-type">{type.info.name}</span> : <span key="type-id">#{info.typeRef}</span>)}
          <span class="ref-id">#{props.id}</span>
          {info?.deleted && <span class="ref-badge">{m("deleted")}</span>}
        </span>
      </div>
      <div class="ref-actions">{props.children}</div>
    </div>
  );
}

