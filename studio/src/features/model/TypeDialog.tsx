// Creating a type (names and its ApiIdentifier) and renaming one.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "../../api/client";
import { createType, fieldOf, updateType, type FormField, type Language, type TypeDef, type TypeDraft } from "../../data/model";
import { messages } from "../../i18n/i18n";
import { Button, Dialog, problemText, showProblem, toast } from "../../ui/ui";
import { ApiIdentifierField, NameFields } from "./fields";

const m = messages({
  en: { newType: "New type", editType: "Edit type", create: "Create type", save: "Save", cancel: "Cancel", saving: "Saving…", needName: "Give the type a name in at least one language.", created: "Type created.", saved: "Type saved." },
  de: { newType: "Neuer Typ", editType: "Typ bearbeiten", create: "Typ anlegen", save: "Speichern", cancel: "Abbrechen", saving: "Wird gespeichert…", needName: "Geben Sie dem Typ einen Namen in mindestens einer Sprache.", created: "Typ angelegt.", saved: "Typ gespeichert." },
});

export interface FormProblem {
  field: FormField | null;
  text: string;
}

/** toProblem places an error: the API's detail at the field it concerns, else at the form's top. */
export function toProblem(e: unknown): FormProblem {
  const detail = e instanceof ApiError ? e.problem.detail : undefined;
  return { field: fieldOf(detail), text: problemText(e) };
}

export function TypeDialog(props: { branch: string; languages: Language[]; type?: TypeDef; etag?: string | null; onClose: () => void; onSaved: (id: number, apiIdentifier: string) => void }) {
  const t = props.type;
  const [draft, setDraft] = useState<TypeDraft>({ apiIdentifier: t?.apiIdentifier ?? "", names: { ...(t?.names ?? {}) } });
  const [problem, setProblem] = useState<FormProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => showProblem(formRef.current), [problem]);
  const at = (f: FormField) => (problem?.field === f ? problem.text : undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!Object.values(draft.names).some((n) => n.trim())) {
      setProblem({ field: "names", text: m("needName") });
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      if (t) {
        await updateType(props.branch, t, draft, props.etag ?? null);
        toast(m("saved"));
        props.onSaved(t.id, t.apiIdentifier ?? "");
      } else {
        const id = await createType(props.branch, draft);
        toast(m("created"));
        props.onSaved(id, draft.apiIdentifier.trim());
      }
    } catch (err) {
      setProblem(toProblem(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={t ? m("editType") : m("newType")} onClose={props.onClose}
      footer={<>
        <Button onClick={props.onClose}>{m("cancel")}</Button>
        <Button variant="primary" type="submit" form="type-form" disabled={busy}>{busy ? m("saving") : t ? m("save") : m("create")}</Button>
      </>}>
      <form ref={formRef} id="type-form" onSubmit={submit} noValidate>
        {problem && problem.field === null && <div class="problem" role="alert">{problem.text}</div>}
        <NameFields idPrefix="type" languages={props.languages} names={draft.names} error={at("names")} autoFocus
          onChange={(names) => setDraft({ ...draft, names })} />
        <ApiIdentifierField id="type-api" value={draft.apiIdentifier} creating={!t} error={at("apiIdentifier")}
          onChange={(apiIdentifier) => setDraft({ ...draft, apiIdentifier })} />
      </form>
    </Dialog>
  );
}
