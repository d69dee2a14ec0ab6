// The preview of the open object (docs/studio.md "Preview"): the branch's
// templates (objects of type 150, read through Delivery), one rendered by
// Rendering's GetRenderedTemplate over the object in one language, shown in
// a sandboxed frame (srcdoc, no allow-scripts, no allow-same-origin), and
// the object's Delivery JSON. The pure parts are unit-tested.
import type { ApiObject } from "../api/generated/delivery";
import type { GetRenderedTemplateParams } from "../api/generated/rendering";

/** templateType is the system type of templates (typeRazorView). */
export const templateType = 150;

/** maxTemplates is how many templates the picker lists (one Delivery page). */
export const maxTemplates = 200;

/** maxPreviewBytes bounds the HTML the frame shows (Rendering's own bound is 8 MiB). */
export const maxPreviewBytes = 2 * 1024 * 1024;

export interface Template {
  id: number;
  name: string;
}

/** templatesOf lists Delivery's template objects by name (then id), deleted ones left out. */
export function templatesOf(objs: readonly ApiObject[] | undefined): Template[] {
  return (objs ?? [])
    .filter((o) => !o.meta?.deleted && (o.meta?.id ?? 0) > 0)
    .map((o) => ({ id: o.meta?.id ?? 0, name: o.displayName || `#${o.meta?.id ?? "?"}` }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
}

/**
 * chooseTemplate is the template to show: the one in the address when the
 * branch has it, else the first; undefined without templates.
 */
export function chooseTemplate(templates: readonly Template[], wanted: string | undefined): Template | undefined {
  const id = Number(wanted);
  return templates.find((t) => t.id === id) ?? templates[0];
}

/** chooseLanguage is the preview language: the one in the address when known, else the first shown column's, else the first. */
export function chooseLanguage(languages: readonly { id: number }[], wanted: string | undefined, shown: readonly number[]): number | undefined {
  const ids = new Set(languages.map((l) => l.id));
  const w = Number(wanted);
  if (ids.has(w)) return w;
  return shown.find((x) => ids.has(x)) ?? languages[0]?.id;
}

/** renderParams are the query of the render of one template over one object in one language. */
export function renderParams(branch: string, template: number, object: number, language: number | undefined): GetRenderedTemplateParams {
  const p: GetRenderedTemplateParams = { branchId: branch, templateId: template, objects: String(object) };
  if (language) p.languages = String(language);
  return p;
}

/** deliveryPath is the address of the object's Delivery JSON. */
export function deliveryPath(branch: string, id: number): string {
  return `/delivery/api/branches/${encodeURIComponent(branch)}/objects/${encodeURIComponent(String(id))}`;
}

/**
 * frameSandbox is the frame's sandbox, the one Rendering's own policy names:
 * without allow-scripts and allow-same-origin, so the rendered page has an
 * opaque origin and runs no script (a template is an editor's HTML; on the
 * studio's origin it could read the token); its links may open a new window.
 */
export const frameSandbox = "allow-popups allow-popups-to-escape-sandbox";

/**
 * frameDocument is the srcdoc of the frame: the rendered HTML, cut at
 * maxPreviewBytes, behind a policy that refuses script and plugins again
 * (the sandbox already does; the studio's own policy applies too).
 */
export function frameDocument(html: string): { doc: string; cut: boolean } {
  let body = html;
  let cut = false;
  if (new TextEncoder().encode(body).length > maxPreviewBytes) {
    body = new TextDecoder().decode(new TextEncoder().encode(body).slice(0, maxPreviewBytes)).replace(/\uFFFD$/, "");
    cut = true;
  }
  const head = `<meta http-equiv="Content-Security-Policy" content="script-src 'none'; object-src 'none'; base-uri 'none'">`;
  return { doc: head + body, cut };
}
