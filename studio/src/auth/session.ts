// The session: a bearer token from POST /auth/token, kept in memory and in
// session storage (so a reload keeps the tab logged in, another tab or a
// closed browser does not), never in local storage. Renewed before it
// expires, the renewal shared with the tabs holding the same token
// (renewal.ts); a 401 on any call ends it.
import { Api, ApiError } from "../api/client";
import type { AuthToken } from "../api/generated/management";
import { createStore } from "../store";
import { adoptRenewal, replacedToken, type Renewal } from "./renewal";

export interface Session {
  user: string;
  token: string;
  expiresAt: string;
}

const key = "cms.studio.session";

export const session = createStore<Session | null>(load());

/** ended says why the last session ended without a sign-out (the API's 401 detail), for the login to show. */
export const ended = createStore<string | null>(null);

export const api = new Api(typeof location === "undefined" ? "" : location.origin, () => session.get()?.token ?? null);
api.onUnauthorized = (used, detail) => {
  if (!replacedToken(used, session.get())) end(detail ?? "");
};

const tabs =
  typeof window === "undefined" || typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel("cms.studio.session");
if (tabs) {
  tabs.onmessage = (e: MessageEvent) => {
    const next = adoptRenewal(session.get(), e.data);
    if (next) session.set(next);
  };
}

session.subscribe((s) => {
  try {
    if (s) sessionStorage.setItem(key, JSON.stringify(s));
    else sessionStorage.removeItem(key);
  } catch {
    /* storage refused: the session lasts for this page */
  }
  schedule(s);
});
schedule(session.get());

function load(): Session | null {
  try {
    const raw = typeof sessionStorage === "undefined" ? null : sessionStorage.getItem(key);
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    if (!s.token || Date.parse(s.expiresAt) <= Date.now()) return null;
    return s;
  } catch {
    return null;
  }
}

/** login trades the user's password for a token; errors are ApiErrors (401, 429 + retryAfter). */
export async function login(user: string, password: string): Promise<void> {
  const { data } = await api.call("management", "IssueToken", {}, { user, password }, { anonymous: true });
  ended.set(null);
  session.set(toSession(user, data));
}

/**
 * adopt replaces the session's token with one the API answered (a password
 * change revoked the old one); tabs holding the old token adopt it too, as
 * after a renewal.
 */
export function adopt(t: AuthToken) {
  const s = session.get();
  if (!s) return;
  const next = toSession(s.user, t);
  session.set(next);
  const msg: Renewal = { from: s.token, to: next };
  tabs?.postMessage(msg);
}

export async function logout(): Promise<void> {
  try {
    await api.call("management", "Logout", {}, {});
  } catch {
    /* the token is forgotten either way */
  }
  end();
}

/** end forgets the session; reason (a refusal's detail) is shown by the login, none for a sign-out. */
function end(reason?: string) {
  if (reason !== undefined && session.get()) ended.set(reason);
  session.set(null);
}

function toSession(user: string, t: AuthToken): Session {
  if (!t.token || !t.expiresAt) throw new ApiError(500, { title: "the token answer has no token" }, undefined);
  return { user, token: t.token, expiresAt: t.expiresAt };
}

let timer: ReturnType<typeof setTimeout> | undefined;

/** schedule renews the token at two thirds of its remaining lifetime. */
function schedule(s: Session | null) {
  if (timer) clearTimeout(timer);
  timer = undefined;
  if (!s || typeof window === "undefined") return;
  const left = Date.parse(s.expiresAt) - Date.now();
  timer = setTimeout(() => void renew(), Math.max(1000, (left * 2) / 3));
}

async function renew() {
  const s = session.get();
  if (!s) return;
  try {
    const { data } = await api.call("management", "RenewToken", {}, {});
    const next = toSession(s.user, data);
    if (session.get()?.token !== s.token) return; // another tab's renewal was adopted meanwhile
    session.set(next);
    const msg: Renewal = { from: s.token, to: next };
    tabs?.postMessage(msg);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      if (!replacedToken(s.token, session.get())) end(e.message);
    }
    else timer = setTimeout(() => void renew(), 10_000); // offline: try again
  }
}
