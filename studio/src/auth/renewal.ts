// Tabs of one session share its renewals. A renewal replaces the token
// server-side: the renewed one is refused from then on (docs/security.md
// "Bearer tokens"). Tabs holding the same token (a duplicated tab copies
// session storage) would each be signed out by the other's renewal, so the
// tab that renews tells the others on a BroadcastChannel, and a tab whose
// token is the renewed one adopts the successor. Two tabs renewing the same
// token at once both get the same successor from the server.
import type { Session } from "./session";

/** Renewal is the message a tab posts after renewing `from`. */
export interface Renewal {
  from: string;
  to: Session;
}

/** adoptRenewal returns the session a tab holding `current` goes on with after `msg`, or null to keep its own. */
export function adoptRenewal(current: Session | null, msg: unknown): Session | null {
  if (!current || !msg || typeof msg !== "object") return null;
  const m = msg as Partial<Renewal>;
  const to = m.to;
  if (m.from !== current.token || !to || typeof to.token !== "string" || !to.token || typeof to.expiresAt !== "string") return null;
  if (to.user !== current.user || to.token === current.token) return null;
  return { user: to.user, token: to.token, expiresAt: to.expiresAt };
}

/** replacedToken reports whether a 401 answered a call made with `used` while the tab has since moved to another token. */
export function replacedToken(used: string | null, current: Session | null): boolean {
  return !!used && !!current && current.token !== used;
}
