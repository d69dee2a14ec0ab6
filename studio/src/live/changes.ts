// The live change stream of a branch (Delivery WatchChanges, server-sent
// events, docs/live-changes.md), shared by the whole app: one connection
// per branch however many views listen (ref-counted; it closes a few
// seconds after the last listener left, so moving between views does not
// reconnect). EventSource cannot send the bearer token, so the stream is
// read with fetch and a ReadableStream and parsed by ./sse. It resumes with
// Last-Event-ID, reconnects with backoff (the server's retry: as the base,
// doubling to 30 s, jittered; at once when the browser comes back online),
// treats a silence of three heartbeats as a dead connection, and hands a
// "reset" (the server no longer holds the changes since the last id) to the
// listeners, which reload what they show.
//
// Each branch has a store (liveStore) of its connection state and its
// recent changes (who, which objects, when), newest first, for the top
// bar's indicator. A change is "own" when this tab wrote it: the API
// client reports every write (Api.onWrite) and an event is classified only
// once the writes in flight have answered, so a save's own echo is never
// mistaken for someone else's work (another tab of the same user is
// "someone else": its edits are news to this tab).
import type { ChangeEvent } from "../api/generated/delivery";
import { api, session } from "../auth/session";
import { createStore, type Store } from "../store";
import { SSEParser } from "./sse";

/** LiveState is the connection's state as the editor sees it. */
export type LiveState = "connecting" | "live" | "reconnecting" | "offline";

/** LiveChange is one change of the stream (or a reset: kind "reset", reload everything). */
export interface LiveChange {
  version: number;
  kind: string;
  /** The branch the change was written on (the stream's branch or an ancestor). */
  branch: number;
  objectIds: number[];
  types: number[];
  /** The user name the change was committed for ("" for the system's own writes). */
  user: string;
  /** When this tab received it (ms since the epoch). */
  at: number;
  /** This tab wrote it. */
  own: boolean;
}

export interface BranchLive {
  state: LiveState;
  /** Recent changes, newest first, at most maxRecent; resets are not kept. */
  changes: LiveChange[];
  /** Why the stream is not live, in the server's words (a ProblemDetails detail), if it said. */
  problem?: string;
}

export type Listener = (c: LiveChange) => void;

/** The dependencies of a Hub (the app's: fetch, the session's token, the page's origin). */
export interface HubDeps {
  fetch: typeof fetch;
  token: () => string | null;
  origin: string;
  /** Called on a 401 with the token sent: the session is gone, unless it moved on to a renewed token. */
  onUnauthorized?: (token: string | null) => void;
  /** Defaults: 2 s base delay (until the server's retry: says), 30 s at most, 45 s idle, 5 s linger. */
  retryMs?: number;
  maxRetryMs?: number;
  idleMs?: number;
  lingerMs?: number;
  random?: () => number;
}

export const maxRecent = 50;
/** ownWait bounds how long an event waits for the writes in flight before it is classified. */
const ownWait = 3000;

interface Conn {
  branch: string;
  refs: number;
  listeners: Set<Listener>;
  store: Store<BranchLive>;
  closed: boolean;
  abort: AbortController | null;
  wake: (() => void) | null;
  linger: ReturnType<typeof setTimeout> | null;
  lastId: string;
}

/** Hub holds the connections of one app (the studio's is `live`, below). */
export class Hub {
  private conns = new Map<string, Conn>();
  private stores = new Map<string, Store<BranchLive>>();
  private own = new Set<number>();
  /** Comment writes of this tab by object: a comment has no transaction, so its event is matched by object and author (see noteComment). */
  private ownComments = new Map<number, { n: number; until: number; user: string }>();
  private pending = new Set<Promise<unknown>>();
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly deps: HubDeps) {}

  /** liveStore is the state and recent changes of branch (kept after its connection closes). */
  liveStore(branch: string): Store<BranchLive> {
    let s = this.stores.get(branch);
    if (!s) {
      s = createStore<BranchLive>({ state: "connecting", changes: [] });
      this.stores.set(branch, s);
    }
    return s;
  }

  /** subscribe calls listener with every change of branch until the returned function is called. */
  subscribe(branch: string, listener: Listener): () => void {
    let c = this.conns.get(branch);
    if (!c) {
      c = { branch, refs: 0, listeners: new Set(), store: this.liveStore(branch), closed: false, abort: null, wake: null, linger: null, lastId: "" };
      this.conns.set(branch, c);
      void this.run(c);
    }
    const conn = c;
    if (conn.linger) clearTimeout(conn.linger);
    conn.linger = null;
    conn.refs++;
    const wrapped: Listener = (x) => listener(x);
    conn.listeners.add(wrapped);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      conn.listeners.delete(wrapped);
      if (--conn.refs > 0) return;
      conn.linger = setTimeout(() => {
        if (conn.refs === 0) this.close(conn);
      }, this.deps.lingerMs ?? 5000);
    };
  }

  /** connections is the number of open connections (for tests). */
  connections(): number {
    return this.conns.size;
  }

  /** noteWrite tracks a write of this tab until it answers; its transaction becomes "own". */
  noteWrite(p: Promise<unknown>) {
    this.pending.add(p);
    p.then(
      (a) => {
        const id = (a as { data?: { transaction?: { id?: number } } } | undefined)?.data?.transaction?.id;
        if (typeof id === "number") this.own.add(id);
      },
      () => {},
    ).finally(() => this.pending.delete(p));
  }

  /**
   * noteComment marks the next comment event of object id by user (within
   * 10 s) as this tab's: call it before writing, changing or deleting a
   * comment. The event names the object and its author, not the comment,
   * so another user's comment on the object is never taken for this tab's;
   * only the same user's comment from another tab in that moment could be.
   */
  noteComment(id: number, user: string, now = Date.now()) {
    const cur = this.ownComments.get(id);
    const n = cur && cur.until > now && sameUser(cur.user, user) ? cur.n : 0;
    this.ownComments.set(id, { n: n + 1, until: now + 10_000, user });
  }

  private ownComment(ch: LiveChange, now = Date.now()): boolean {
    if (ch.kind !== "comment") return false;
    for (const id of ch.objectIds) {
      const c = this.ownComments.get(id);
      if (!c || c.until <= now || !sameUser(c.user, ch.user)) continue;
      if (--c.n <= 0) this.ownComments.delete(id);
      return true;
    }
    return false;
  }

  /** closeAll ends every connection and forgets the recent changes (signing out: the next user sees none of them). */
  closeAll() {
    for (const c of [...this.conns.values()]) this.close(c);
    for (const s of this.stores.values()) s.set({ state: "connecting", changes: [] });
    this.own.clear();
    this.ownComments.clear();
  }

  /** online retries every waiting connection at once. */
  online() {
    for (const c of this.conns.values()) c.wake?.();
  }

  private close(c: Conn) {
    c.closed = true;
    c.abort?.abort();
    c.wake?.();
    if (c.linger) clearTimeout(c.linger);
    if (this.conns.get(c.branch) === c) this.conns.delete(c.branch);
  }

  private set(c: Conn, state: LiveState, problem?: string) {
    const cur = c.store.get();
    if (cur.state === state && cur.problem === problem) return;
    c.store.set({ ...cur, state, problem });
  }

  private sleep(c: Conn, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        c.wake = null;
        resolve();
      }
      c.wake = done;
    });
  }

  private async run(c: Conn) {
    let base = this.deps.retryMs ?? 2000;
    const max = this.deps.maxRetryMs ?? 30_000;
    const rnd = this.deps.random ?? Math.random;
    let failures = 0;
    const backoff = () => Math.min(max, base * 2 ** Math.min(failures, 10)) * (0.5 + rnd() / 2);
    while (!c.closed) {
      const ac = new AbortController();
      c.abort = ac;
      const headers: Record<string, string> = { Accept: "text/event-stream" };
      const token = this.deps.token();
      if (token) headers.Authorization = "Bearer " + token;
      if (c.lastId) headers["Last-Event-ID"] = c.lastId;
      let resp: Response;
      try {
        resp = await this.deps.fetch(`${this.deps.origin}/delivery/api/branches/${encodeURIComponent(c.branch)}/changes`, {
          headers, signal: ac.signal, cache: "no-store", credentials: "omit",
        });
      } catch {
        if (c.closed) break;
        failures++;
        const offline = failures >= 2 || (typeof navigator !== "undefined" && navigator.onLine === false);
        this.set(c, offline ? "offline" : "reconnecting");
        await this.sleep(c, backoff());
        continue;
      }
      if (!resp.ok) {
        const problem = await problemOf(resp);
        if (resp.status === 401) {
          this.deps.onUnauthorized?.(token);
          const now = this.deps.token();
          if (now && now !== token) continue; // renewed meanwhile (another tab): try with the successor
          this.set(c, "offline", problem);
          break;
        }
        failures++;
        const ra = Number(resp.headers.get("Retry-After"));
        // 429/503: the server says when. 400/403/404: a branch created a
        // moment ago is not indexed yet (it is within a second), or a grant or
        // a restore may bring it back: back off as for an outage, and say
        // "offline" only once it keeps failing.
        const wait = ra > 0 ? ra * 1000 : backoff();
        const transient = resp.status >= 500 || resp.status === 429 || failures < 3;
        this.set(c, transient ? "reconnecting" : "offline", problem);
        await this.sleep(c, wait);
        continue;
      }
      failures = 0;
      this.set(c, "live");
      const retry = await this.read(c, resp, ac);
      if (retry) base = retry;
      if (c.closed) break;
      failures = 1;
      this.set(c, "reconnecting");
      await this.sleep(c, backoff());
    }
    c.abort = null;
  }

  /** read takes the events of one response until it ends; it returns the server's retry: if it sent one. */
  private async read(c: Conn, resp: Response, ac: AbortController): Promise<number | undefined> {
    const reader = resp.body?.getReader();
    if (!reader) return undefined;
    const parser = new SSEParser(c.lastId);
    const decoder = new TextDecoder();
    const idleMs = this.deps.idleMs ?? 45_000;
    let idle = setTimeout(() => ac.abort(), idleMs);
    let retry: number | undefined;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        clearTimeout(idle);
        idle = setTimeout(() => ac.abort(), idleMs); // heartbeats keep it alive
        for (const msg of parser.push(decoder.decode(value, { stream: true }))) {
          if (msg.type === "retry") retry = msg.ms;
          if (msg.type !== "event") continue;
          c.lastId = msg.id;
          const ch = toChange(msg.event, msg.data);
          if (ch) this.deliver(c, ch);
        }
      }
    } catch {
      /* aborted or cut: reconnect */
    } finally {
      clearTimeout(idle);
      reader.releaseLock?.();
    }
    return retry;
  }

  /** deliver classifies a change once this tab's writes in flight answered, then records and hands it on, in order. */
  private deliver(c: Conn, ch: LiveChange) {
    this.queue = this.queue.then(async () => {
      if (this.pending.size > 0) {
        await Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => setTimeout(r, ownWait))]);
      }
      const out = { ...ch, own: this.own.has(ch.version) || this.ownComment(ch) };
      if (out.kind !== "reset") {
        const cur = c.store.get();
        c.store.set({ ...cur, changes: [out, ...cur.changes].slice(0, maxRecent) });
      }
      for (const l of [...c.listeners]) {
        try {
          l(out);
        } catch (e) {
          console.error("live change listener", e);
        }
      }
    });
  }
}

/** toChange reads one event of the stream; malformed data is dropped (null). */
/** sameUser compares user names as the server does (without case). */
function sameUser(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export function toChange(event: string, data: string, now = Date.now()): LiveChange | null {
  let d: ChangeEvent;
  try {
    d = JSON.parse(data) as ChangeEvent;
  } catch {
    return null;
  }
  if (!d || typeof d !== "object" || typeof d.version !== "number") return null;
  return {
    version: d.version,
    kind: event === "reset" ? "reset" : d.kind ?? event,
    branch: d.branch ?? 0,
    objectIds: Array.isArray(d.objectIds) ? d.objectIds : [],
    types: Array.isArray(d.types) ? d.types : [],
    user: typeof d.user === "string" ? d.user : "",
    at: now,
    own: false,
  };
}

async function problemOf(resp: Response): Promise<string | undefined> {
  try {
    const p = (await resp.json()) as { detail?: string; title?: string };
    return p.detail || p.title || undefined;
  } catch {
    return undefined;
  }
}

// The studio's hub: the session's token and origin; a write through the
// API client marks its transaction as this tab's; signing out closes every
// stream; coming back online retries at once.
export const live = new Hub({
  fetch: (...a) => fetch(...a),
  token: () => session.get()?.token ?? null,
  origin: typeof location === "undefined" ? "" : location.origin,
  onUnauthorized: (token) => api.onUnauthorized?.(token),
});
api.onWrite = (p) => live.noteWrite(p);
session.subscribe((s) => {
  if (!s) live.closeAll();
});
if (typeof window !== "undefined") window.addEventListener("online", () => live.online());

/** subscribe calls listener with each change of branch (and "reset"); it returns the unsubscribe. */
export function subscribe(branch: string, listener: Listener): () => void {
  return live.subscribe(branch, listener);
}

/** liveStore is branch's connection state and recent changes. */
export function liveStore(branch: string): Store<BranchLive> {
  return live.liveStore(branch);
}
