// The reference picker: a dialog with a search (Index ObjectSearch over
// the attribute's target types, as the editor types), the results as a
// listbox the keyboard walks (↑ ↓ Home End, Enter picks), and "Create
// new": a type among the targets and a name, created through Management
// CreateObjects and picked at once.
import { useEffect, useRef, useState } from "preact/hooks";
import type { ObjectItem } from "../../../api/generated/index";
import { api } from "../../../auth/session";
import { loadTypes, type TypeInfo } from "../../../data/types";
import { locale } from "../../../i18n/i18n";
import { uiLanguages } from "../../../shell/Shell";
import { useStore } from "../../../store";
import { Button, Dialog, Field, Problem, Skeleton } from "../../../ui/ui";
import { m } from "./reference-messages";
import { Thumb, useRefInfo } from "./reference-card";
import { createBody, isBinary, maxNameLength, moveActive, pageSize, searchBody } from "./reference-model";
import { refInfo, remember } from "./refs";
import type { AttributeInfo } from "./registry";

export interface PickerProps {
  branch: string;
  attr: AttributeInfo;
  label: string;
  /** Ids already chosen (marked in the results). */
  current: readonly number[];
  onPick: (id: number) => void;
  onClose: () => void;
}

/** searchDelay: the pause in typing after which the picker asks the index. */
const searchDelay = 200;

export function Picker(props: PickerProps) {
  const [creating, setCreating] = useState(false);
  return (
    <Dialog title={creating ? m("createTitle") : m("pickTitle", { field: props.label })} onClose={props.onClose}>
      {creating ? <CreateForm {...props} onBack={() => setCreating(false)} /> : <Search {...props} onCreate={() => setCreating(true)} />}
    </Dialog>
  );
}

function Search(props: PickerProps & { onCreate: () => void }) {
  const l = useStore(locale);
  const [text, setText] = useState("");
  const [items, setItems] = useState<ObjectItem[] | null>(null);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [active, setActive] = useState(-1);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);
  const base = `ref-pick-${props.attr.id}`;

  // The dialog's showModal runs after this component's effects (a parent's
  // effects come last) and focuses the first control: autofocus names the
  // search box for it, and the timeout covers a dialog already open.
  useEffect(() => {
    const t = setTimeout(() => input.current?.focus());
    return () => clearTimeout(t);
  }, []);
  useEffect(() => {
    const ac = new AbortController();
    const t = setTimeout(() => {
      setError(null);
      api.call("index", "ObjectSearch", { branch: props.branch }, searchBody(text, props.attr.targetTypes, uiLanguages(l)[0] ?? 201), { signal: ac.signal })
        .then(({ data }) => {
          setItems(data.objects ?? []);
          setMore(!!data.more);
          setActive((data.objects ?? []).length ? 0 : -1);
        }, (e) => !ac.signal.aborted && setError(e));
    }, items === null ? 0 : searchDelay);
    return () => {
      clearTimeout(t);
      ac.abort();
    };
  }, [text, props.branch, l]);

  useEffect(() => {
    list.current?.querySelector(`#${base}-opt-${active}`)?.scrollIntoView({ block: "nearest" });
  }, [active]);

  const pick = (it: ObjectItem | undefined) => {
    if (it?.id !== undefined) props.onPick(it.id);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Enter") {
      e.preventDefault();
      pick(items?.[active]);
      return;
    }
    const next = moveActive(active, e.key, items?.length ?? 0);
    if (next === undefined || ((e.key === "Home" || e.key === "End") && !e.ctrlKey)) return;
    e.preventDefault();
    setActive(next);
  };
  const count = items?.length ?? 0;
  return (
    <div class="ref-picker">
      <Field label={m("search")} for={`${base}-q`} hint={m("searchHint")}>
        <input ref={input} id={`${base}-q`} type="search" autoFocus autoComplete="off" spellcheck={false} maxLength={200} value={text}
          role="combobox" aria-expanded="true" aria-controls={`${base}-list`} aria-autocomplete="list"
          aria-activedescendant={active >= 0 && count ? `${base}-opt-${active}` : undefined}
          onInput={(e) => setText(e.currentTarget.value)} onKeyDown={onKeyDown} />
      </Field>
      <div class="ref-results-head">
        <span id={`${base}-status`} class="muted" role="status">
          {items === null ? "" : text.trim() === "" ? m("recent") : more ? m("more", { n: pageSize }) : m("found", { n: count })}
        </span>
        <Button variant="ghost" onClick={props.onCreate}>{m("createNew")}</Button>
      </div>
      {error !== null ? (
        <Problem error={error} />
      ) : items === null ? (
        <Skeleton lines={5} />
      ) : count === 0 ? (
        <p class="muted ref-no-results">{m("noResults")}</p>
      ) : null}
      <ul ref={list} id={`${base}-list`} class="ref-results" role="listbox" aria-label={m("results")} hidden={!count || error !== null}>
        {items?.map((it, i) => (
          <li key={it.id} id={`${base}-opt-${i}`} role="option" aria-selected={i === active ? "true" : "false"}
            class={`ref-option ${i === active ? "active" : ""}`}
            onMouseMove={() => i !== active && setActive(i)} onMouseDown={(e) => e.preventDefault()} onClick={() => pick(it)}>
            {isBinary(props.attr.dataType) && it.id !== undefined && <Thumb branch={props.branch} id={it.id} size={32} />}
            <span class="ref-option-name">{it.displayName ?? `#${it.id}`}</span>
            <span class="ref-meta">
              <TypeName branch={props.branch} id={it.typeRef} />
              <span class="ref-id">#{it.id}</span>
              {it.id !== undefined && props.current.includes(it.id) && <span class="ref-badge">{m("chosen")}</span>}
            </span>
          </li>
        ))}
      </ul>
      <p class="field-hint ref-keys" aria-hidden="true">{m("hint")}</p>
    </div>
  );
}

function TypeName(props: { branch: string; id: number | undefined }) {
  const { info } = useRefInfo(props.branch, props.id);
  if (props.id === undefined) return null;
  return <span>{info?.name ?? `#${props.id}`}</span>;
}

/** useTargetTypes: the attribute's target types with names; all content types when it names none. */
function useTargetTypes(branch: string, targets: readonly number[]) {
  const l = useStore(locale);
  const [types, setTypes] = useState<{ id: number; name: string }[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const ac = new AbortController();
    const pref = uiLanguages(l);
    const load: Promise<{ id: number; name: string }[]> = targets.length
      ? Promise.all(targets.map((id) => refInfo(branch, id, pref).then((r) => ({ id, name: r?.name ?? `#${id}` }))))
      : loadTypes(branch, pref, ac.signal).then((ts: TypeInfo[]) => ts.map((t) => ({ id: t.id, name: t.name })));
    load.then((ts) => !ac.signal.aborted && setTypes(ts), (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [branch, targets.join(","), l]);
  return { types, error };
}

function CreateForm(props: PickerProps & { onBack: () => void }) {
  const l = useStore(locale);
  const { types, error: typesError } = useTargetTypes(props.branch, props.attr.targetTypes);
  const [type, setType] = useState<number | undefined>(undefined);
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [nameError, setNameError] = useState<string | undefined>();
  const nameRef = useRef<HTMLInputElement>(null);
  const base = `ref-new-${props.attr.id}`;
  const chosenType = type ?? types?.[0]?.id;
  useEffect(() => {
    const t = setTimeout(() => nameRef.current?.focus());
    return () => clearTimeout(t);
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy || chosenType === undefined) return;
    if (name.trim() === "") {
      setNameError(m("nameRequired"));
      nameRef.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    const language = uiLanguages(l)[0] ?? 201;
    try {
      const { data } = await api.call("management", "CreateObjects", { branch: props.branch }, createBody(chosenType, name, language));
      const id = data.createdObjectIds?.[0];
      if (id === undefined) throw new Error("the answer names no created object");
      remember(props.branch, { id, name: name.trim(), typeRef: chosenType, deleted: false }, uiLanguages(l));
      props.onPick(id);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <form class="ref-create" onSubmit={(e) => void submit(e)} aria-busy={busy ? "true" : undefined}>
      <Field label={m("type")} for={`${base}-type`}>
        {typesError ? (
          <Problem error={typesError} />
        ) : (
          <select id={`${base}-type`} class="input" disabled={!types || busy} value={chosenType === undefined ? "" : String(chosenType)}
            onChange={(e) => setType(Number(e.currentTarget.value))}>
            {!types && <option value="">{m("loadingTypes")}</option>}
            {types?.map((t) => (
              <option key={t.id} value={String(t.id)}>{t.name}</option>
            ))}
          </select>
        )}
      </Field>
      <Field label={m("name")} for={`${base}-name`} error={nameError}>
        <input ref={nameRef} id={`${base}-name`} type="text" value={name} maxLength={maxNameLength} disabled={busy} autoComplete="off"
          aria-invalid={nameError ? "true" : undefined} aria-describedby={nameError ? `${base}-name-error` : undefined}
          onInput={(e) => { setName(e.currentTarget.value); setNameError(undefined); }} />
      </Field>
      {error !== null && <Problem error={error} />}
      <div class="ref-create-actions">
        <Button onClick={props.onBack} disabled={busy}>{m("back")}</Button>
        <span class="spacer" />
        <Button variant="primary" type="submit" disabled={busy || chosenType === undefined}>{busy ? m("creating") : m("create")}</Button>
      </div>
    </form>
  );
}
