// URLs are state: branch, section, type, object and the view's options
// (languages, filter, sort, search) live in the address, so a reload or a
// shared link opens the same view. Paths are under /studio/:
//   /studio/                                  home (branch chosen last)
//   /studio/b/{branch}/content/{type}         a type's list
//   /studio/b/{branch}/content/{type}/{id}    an object
//   /studio/b/{branch}/model[/{type}]         the model (types and attributes)
//   /studio/b/{branch}/webhooks[/{id}]        webhooks (administrators)
//   /studio/b/{branch}/code                   the generated models to download
//   /studio/b/{branch}/jobs[/{id}]            the branch's jobs (queue, one job)
//   /studio/users[/{id}]                      the users (administrators)
//   /studio/account                           the own account (everybody)
//   /studio/b/{branch}/operations             the process's state (administrators)
//   /studio/b/{branch}/media                  the media library (files)
import { createStore } from "./store";

export const base = "/studio/";

export type Section = "content" | "model" | "webhooks" | "code" | "operations" | "users" | "account" | "media" | "jobs";

/** branchSections are the sections of one branch (under /b/{branch}/). */
export const branchSections: readonly Section[] = ["content", "model", "webhooks", "code", "operations", "media", "jobs"];

export interface Route {
  branch?: string;
  section: Section;
  type?: string;
  object?: string;
  /** The webhook shown (/webhooks/{id}). */
  webhook?: string;
  /** The job shown (/jobs/{id}). */
  job?: string;
  /** The user shown (section users). */
  user?: string;
  /** The view's options (lang, filter, sort, q, …). */
  query: Record<string, string>;
}

export function parse(pathname: string, search: string): Route {
  const rest = pathname.startsWith(base) ? pathname.slice(base.length) : "";
  const seg = rest.split("/").filter(Boolean).map(decodeURIComponent);
  const query: Record<string, string> = {};
  new URLSearchParams(search).forEach((v, k) => (query[k] = v));
  const r: Route = { section: "content", query };
  if (seg[0] === "users" || seg[0] === "account") {
    r.section = seg[0];
    if (seg[0] === "users" && seg[1]) r.user = seg[1];
    return r;
  }
  if (seg[0] === "b" && seg[1]) {
    r.branch = seg[1];
    const sec = branchSections.find((x) => x === seg[2]);
    if (sec) r.section = sec;
    if (seg[2] === "content" || seg[2] === "model") {
      if (seg[3]) r.type = seg[3];
      if (seg[4] && seg[2] === "content") r.object = seg[4];
    }
    if (seg[2] === "webhooks" && seg[3]) r.webhook = seg[3];
    if (seg[2] === "jobs" && seg[3]) r.job = seg[3];
  }
  return r;
}

export function format(r: Route): string {
  let p = base;
  if (r.section === "users" || r.section === "account") {
    p += r.section;
    if (r.section === "users" && r.user) p += `/${encodeURIComponent(r.user)}`;
  } else if (r.branch) {
    p += `b/${encodeURIComponent(r.branch)}/${r.section}`;
    if (r.type && (r.section === "content" || r.section === "model")) p += `/${encodeURIComponent(r.type)}`;
    if (r.type && r.object && r.section === "content") p += `/${encodeURIComponent(r.object)}`;
    if (r.webhook && r.section === "webhooks") p += `/${encodeURIComponent(r.webhook)}`;
    if (r.job && r.section === "jobs") p += `/${encodeURIComponent(r.job)}`;
  }
  const q = new URLSearchParams();
  for (const k of Object.keys(r.query).sort()) if (r.query[k] !== "") q.set(k, r.query[k] ?? "");
  const qs = q.toString();
  return qs ? `${p}?${qs}` : p;
}

export const route = createStore<Route>(
  typeof location === "undefined" ? { section: "content", query: {} } : parse(location.pathname, location.search),
);

/** navigate shows another view; replace keeps the history entry (option changes). */
export function navigate(next: Route, replace = false) {
  const url = format(next);
  if (typeof history !== "undefined" && url !== location.pathname + location.search) {
    if (replace) history.replaceState(null, "", url);
    else history.pushState(null, "", url);
  }
  route.set(next);
}

/** setQuery changes some of the view's options in place. */
export function setQuery(changes: Record<string, string | undefined>) {
  const cur = route.get();
  const query = { ...cur.query };
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === "") delete query[k];
    else query[k] = v;
  }
  navigate({ ...cur, query }, true);
}

if (typeof window !== "undefined") {
  window.addEventListener("popstate", () => route.set(parse(location.pathname, location.search)));
}
