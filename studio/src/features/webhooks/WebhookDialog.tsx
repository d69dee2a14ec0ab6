// Creating and changing a webhook: name, receiver URL, enabled, and the
// filters (branches, types, kinds; none checked = all). A new webhook gets
// a secret made in the browser, which the caller shows once.
import { useEffect, useRef, useState } from "preact/hooks";
import type { BranchNode } from "../../data/branches";
import type { TypeInfo } from "../../data/types";
import { createWebhook, eventKinds, newSecret, updateWebhook, urlProblem, type Webhook, type WebhookDraft } from "../../data/webhooks";
import { messages } from "../../i18n/i18n";
import { Button, Dialog, Field, problemText, showProblem, toast } from "../../ui/ui";

const m = messages({
  en: {
    newWebhook: "New webhook", editWebhook: "Edit webhook", create: "Create webhook", save: "Save", cancel: "Cancel", saving: "Saving…",
    name: "Name", url: "Receiver URL", urlHint: "Every matching change is POSTed here as JSON, signed with the webhook's secret (header X-Cms-Signature).",
    enabled: "Enabled: deliver changes", branches: "Branches", types: "Types", kinds: "Kinds of change",
    allHint: "None checked: all.", noTypes: "This branch has no content types.",
    required: "Enter the receiver's URL.", scheme: "The URL must start with http:// or https://.", invalid: "This is not an absolute URL.",
    created: "Webhook created.", saved: "Webhook saved.",
    kind_created: "created", kind_updated: "updated", kind_deleted: "deleted", kind_branchDeleted: "branch deleted", kind_comment: "comment",
  },
  de: {
    newWebhook: "Neuer Webhook", editWebhook: "Webhook bearbeiten", create: "Webhook anlegen", save: "Speichern", cancel: "Abbrechen", saving: "Wird gespeichert…",
    name: "Name", url: "Empfänger-URL", urlHint: "Jede passende Änderung wird hierhin als JSON gesendet (POST), signiert mit dem Geheimnis des Webhooks (Header X-Cms-Signature).",
    enabled: "Aktiv: Änderungen zustellen", branches: "Branches", types: "Typen", kinds: "Arten von Änderungen",
    allHint: "Nichts angekreuzt: alle.", noTypes: "Dieser Branch hat keine Inhaltstypen.",
    required: "Geben Sie die URL des Empfängers ein.", scheme: "Die URL muss mit http:// oder https:// beginnen.", invalid: "Das ist keine absolute URL.",
    created: "Webhook angelegt.", saved: "Webhook gespeichert.",
    kind_created: "angelegt", kind_updated: "geändert", kind_deleted: "gelöscht", kind_branchDeleted: "Branch gelöscht", kind_comment: "Kommentar",
  },
});

export const kindLabel = (k: string) =>
  (eventKinds as readonly string[]).includes(k) ? m(`kind_${k}` as "kind_created") : k;

function toggle<T>(list: readonly T[], v: T, on: boolean): T[] {
  return on ? [...list.filter((x) => x !== v), v] : list.filter((x) => x !== v);
}

export function WebhookDialog(props: {
  webhook?: Webhook;
  branches: BranchNode[];
  types: TypeInfo[];
  onClose: () => void;
  /** onSaved gets the id and, for a new webhook, its secret (to show once). */
  onSaved: (id: number, secret: string | undefined) => void;
}) {
  const w = props.webhook;
  const [draft, setDraft] = useState<WebhookDraft>({
    name: w?.name ?? "", url: w?.url ?? "", branches: w?.branches ?? [], types: w?.types ?? [], kinds: w?.kinds ?? [], enabled: w?.enabled ?? true,
  });
  const [urlError, setUrlError] = useState<string | undefined>(undefined);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => showProblem(formRef.current), [problem, urlError]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const bad = urlProblem(draft.url);
    setUrlError(bad ? m(bad) : undefined);
    if (bad) return;
    setBusy(true);
    setProblem(null);
    try {
      if (w) {
        await updateWebhook(w, draft);
        toast(m("saved"));
        props.onSaved(w.id, undefined);
      } else {
        const secret = newSecret();
        const id = await createWebhook({ ...draft, secret });
        toast(m("created"));
        props.onSaved(id, secret);
      }
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setBusy(false);
    }
  };
  const order = (ids: number[], all: { id: number }[]) => all.map((x) => x.id).filter((id) => ids.includes(id));
  return (
    <Dialog title={w ? m("editWebhook") : m("newWebhook")} onClose={props.onClose}
      footer={<>
        <Button onClick={props.onClose}>{m("cancel")}</Button>
        <Button variant="primary" type="submit" form="webhook-form" disabled={busy}>{busy ? m("saving") : w ? m("save") : m("create")}</Button>
      </>}>
      <form ref={formRef} id="webhook-form" class="webhook-form" onSubmit={submit} noValidate>
        {problem && <div class="problem" role="alert">{problem}</div>}
        <Field label={m("name")} for="webhook-name">
          <input id="webhook-name" class="input" value={draft.name} autoFocus maxLength={200}
            onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        </Field>
        <Field label={m("url")} for="webhook-url" error={urlError} hint={m("urlHint")}>
          <input id="webhook-url" class="input" type="url" inputMode="url" value={draft.url} maxLength={2048} required
            aria-invalid={urlError ? true : undefined} aria-describedby={urlError ? "webhook-url-error" : undefined}
            onInput={(e) => setDraft({ ...draft, url: e.currentTarget.value })} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })} />
          {m("enabled")}
        </label>
        <fieldset class="fieldset">
          <legend>{m("branches")}</legend>
          <p class="field-hint">{m("allHint")}</p>
          <div class="checks">
            {props.branches.map((b) => (
              <label key={b.id} class="check">
                <input type="checkbox" checked={draft.branches.includes(b.id)}
                  onChange={(e) => setDraft({ ...draft, branches: order(toggle(draft.branches, b.id, e.currentTarget.checked), props.branches) })} />
                {b.name}
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset class="fieldset">
          <legend>{m("types")}</legend>
          <p class="field-hint">{m("allHint")}</p>
          {props.types.length === 0 && <p class="muted">{m("noTypes")}</p>}
          <div class="checks">
            {props.types.map((t) => (
              <label key={t.id} class="check">
                <input type="checkbox" checked={draft.types.includes(t.id)}
                  onChange={(e) => setDraft({ ...draft, types: order(toggle(draft.types, t.id, e.currentTarget.checked), props.types) })} />
                {t.name}
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset class="fieldset">
          <legend>{m("kinds")}</legend>
          <p class="field-hint">{m("allHint")}</p>
          <div class="checks">
            {eventKinds.map((k) => (
              <label key={k} class="check">
                <input type="checkbox" checked={draft.kinds.includes(k)}
                  onChange={(e) => setDraft({ ...draft, kinds: eventKinds.filter((x) => x === k ? e.currentTarget.checked : draft.kinds.includes(x)) })} />
                {kindLabel(k)}
              </label>
            ))}
          </div>
        </fieldset>
      </form>
    </Dialog>
  );
}
