// The preview beside the open object (a lazy chunk, loaded when the editor
// opens it): a template of the branch, rendered by Rendering over the
// object in one language, in a sandboxed frame (srcdoc; no script, an
// opaque origin), rendered again whenever the object's last transaction
// changes (after each save, which answers once its transaction committed:
// renders read the current Management view), and a link to the object's
// Delivery JSON. Template and language are in the address (?preview=,
// ?previewLang=).
import { useEffect, useState } from "preact/hooks";
import { api } from "../../auth/session";
import {
  chooseLanguage, chooseTemplate, deliveryPath, frameDocument, frameSandbox, maxTemplates, renderParams, templateType, templatesOf, type Template,
} from "../../data/preview";
import { messages } from "../../i18n/i18n";
import { setQuery } from "../../router";
import { Problem, problemText, Skeleton, toast } from "../../ui/ui";
import "./preview.css";

const m = messages({
  en: {
    preview: "Preview", template: "Template", language: "Preview language", noTemplates: "This branch has no templates (objects of type 150) to preview with.",
    frame: "Preview of {object} with {template} in {language}", json: "Delivery JSON", jsonTitle: "Open the object's Delivery JSON in a new tab",
    rendering: "Rendering…", cut: "The rendered page is longer than the preview shows (2 MiB).",
    jsonFailed: "The Delivery JSON could not be read: {reason}",
  },
  de: {
    preview: "Vorschau", template: "Vorlage", language: "Sprache der Vorschau", noTemplates: "Dieser Branch hat keine Vorlagen (Objekte des Typs 150) für eine Vorschau.",
    frame: "Vorschau von {object} mit {template} auf {language}", json: "Delivery-JSON", jsonTitle: "Das Delivery-JSON des Objekts in einem neuen Tab öffnen",
    rendering: "Wird gerendert…", cut: "Die gerenderte Seite ist länger, als die Vorschau zeigt (2 MiB).",
    jsonFailed: "Das Delivery-JSON konnte nicht gelesen werden: {reason}",
  },
});

export interface PreviewProps {
  branch: string;
  objectId: number;
  objectName: string;
  /** The object's last transaction as loaded: a new one renders again. */
  version: number;
  languages: readonly { id: number; code: string; name: string }[];
  shownLanguages: readonly number[];
  query: Record<string, string>;
}

export function Preview(p: PreviewProps) {
  const [templates, setTemplates] = useState<Template[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [html, setHtml] = useState<{ doc: string; cut: boolean; key: string } | null>(null);
  const [renderError, setRenderError] = useState<unknown>(null);

  useEffect(() => {
    let live = true;
    api.call("delivery", "ListTyped", { branch: p.branch, type: String(templateType), take: maxTemplates, deleted: false })
      .then(({ data }) => live && setTemplates(templatesOf(data.objs)), (e: unknown) => live && setError(e));
    return () => {
      live = false;
    };
  }, [p.branch]);

  const template = templates ? chooseTemplate(templates, p.query.preview) : undefined;
  const language = chooseLanguage(p.languages, p.query.previewLang, p.shownLanguages);
  const key = `${template?.id}:${language}:${p.version}`;

  useEffect(() => {
    if (!template) return;
    const ctl = new AbortController();
    setRenderError(null);
    api.blob("rendering", "GetRenderedTemplate", renderParams(p.branch, template.id, p.objectId, language), { signal: ctl.signal })
      .then((b) => b.text())
      .then((text) => !ctl.signal.aborted && setHtml({ ...frameDocument(text), key }),
        (e: unknown) => {
          if (ctl.signal.aborted) return;
          setRenderError(e);
          setHtml(null); // not another template's or language's page under this one's name
        });
    return () => ctl.abort();
  }, [key, p.branch, p.objectId]);

  const openJSON = async (ev: MouseEvent) => {
    if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    // A new tab cannot send the token: the JSON is read here and opened as a blob: URL (never run: application/json).
    try {
      const b = await api.blob("delivery", "Get", { branch: p.branch, id: String(p.objectId) });
      const url = URL.createObjectURL(new Blob([await b.text()], { type: "application/json" }));
      window.open(url, "_blank", "noopener");
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      // Not yet in Delivery (never published, deleted), not readable, or the server away: say so, as a link would.
      toast(m("jsonFailed", { reason: problemText(e) }), "error");
    }
  };

  const langName = p.languages.find((l) => l.id === language)?.name ?? String(language ?? "");
  return (
    <aside class="preview" aria-label={m("preview")}>
      <div class="preview-bar">
        <h2 class="preview-title">{m("preview")}</h2>
        {templates && templates.length > 0 && (
          <div class="topbar-field">
            <label for="preview-template">{m("template")}</label>
            <select id="preview-template" class="input" value={String(template?.id ?? "")} onChange={(ev) => setQuery({ preview: ev.currentTarget.value })}>
              {templates.map((t) => <option key={t.id} value={String(t.id)}>{t.name}</option>)}
            </select>
          </div>
        )}
        <div class="topbar-field">
          <label for="preview-language">{m("language")}</label>
          <select id="preview-language" class="input" value={String(language ?? "")} onChange={(ev) => setQuery({ previewLang: ev.currentTarget.value })}>
            {p.languages.map((l) => <option key={l.id} value={String(l.id)}>{l.name} ({l.code})</option>)}
          </select>
        </div>
        <a class="preview-json" href={deliveryPath(p.branch, p.objectId)} title={m("jsonTitle")} target="_blank" rel="noopener" onClick={(ev) => void openJSON(ev)}>{m("json")}</a>
      </div>
      {error !== null && <Problem error={error} />}
      {templates === null && error === null && <Skeleton lines={4} />}
      {templates !== null && templates.length === 0 && <p class="muted">{m("noTemplates")}</p>}
      {renderError !== null && <Problem error={renderError} />}
      {template && html && (
        <>
          <span class="visually-hidden" role="status">{html.key === key ? "" : m("rendering")}</span>
          {html.cut && <p class="muted">{m("cut")}</p>}
          <iframe class="preview-frame" sandbox={frameSandbox} srcdoc={html.doc} data-key={html.key}
            onLoad={(ev) => (ev.currentTarget.dataset.loaded = html.key)}
            title={m("frame", { object: p.objectName, template: template.name, language: langName })} />
        </>
      )}
    </aside>
  );
}
