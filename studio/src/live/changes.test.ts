/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { Hub, toChange, type HubDeps, type LiveChange } from "./changes";

// A fake server: each fetch gets the next scripted answer; a stream answer
// is a ReadableStream the test writes to.
interface Served {
  url: string;
  headers: Record<string, string>;
  push(text: string): void;
  end(): void;
}

function fakeServer() {
  const served: Served[] = [];
  const waiting: ((s: Served) => void)[] = [];
  const errors: (Response | Error)[] = [];
  const f = (async (url: string, init: RequestInit) => {
    const next = errors.shift();
    if (next instanceof Error) throw next;
    if (next) return next;
    let ctl!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) });
    const enc = new TextEncoder();
    let open = true;
    init.signal?.addEventListener("abort", () => {
      if (open) ctl.error(new DOMException("aborted", "AbortError"));
      open = false;
    });
    const s: Served = {
      url,
      headers: init.headers as Record<string, string>,
      push: (t) => open && ctl.enqueue(enc.encode(t)),
      end: () => {
        if (open) ctl.close();
        open = false;
      },
    };
    served.push(s);
    for (const w of waiting.splice(0)) w(s);
    return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
  }) as unknown as typeof fetch;
  let claimed = 0;
  // next is the next connection not yet claimed (made before or after the call).
  const next = (): Promise<Served> =>
    new Promise((resolve) => {
      const i = claimed++;
      const check = () => {
        const s = served[i];
        if (s) resolve(s);
        else waiting.push(check);
      };
      check();
    });
  return { fetch: f, served, errors, next };
}

function hub(f: typeof fetch, extra: Partial<HubDeps> = {}) {
  return new Hub({ fetch: f, token: () => "tok", origin: "http://cms", retryMs: 5, maxRetryMs: 20, lingerMs: 10, random: () => 1, ...extra });
}

const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), what);
};

const ev = (v: number, kind: string, user: string, ids = [10], types = [1200]) =>
  `id: ${v}\nevent: ${kind}\ndata: ${JSON.stringify({ version: v, kind, branch: 4, objectIds: ids, types, user })}\n\n`;

test("one connection per branch for every listener, closed after the last one leaves", async () => {
  const srv = fakeServer();
  const h = hub(srv.fetch);
  const a: LiveChange[] = [];
  const b: LiveChange[] = [];
  const offA = h.subscribe("4", (c) => a.push(c));
  const offB = h.subscribe("4", (c) => b.push(c));
  const s = await srv.next();
  assert.equal(srv.served.length, 1);
  assert.equal(s.url, "http://cms/delivery/api/branches/4/changes");
  assert.equal(s.headers.Authorization, "Bearer tok");
  assert.equal(s.headers["Last-Event-ID"], undefined);
  s.push("retry: 2000\n\n" + ev(57, "updated", "maria"));
  await until(() => a.length === 1 && b.length === 1, "both listeners got the change");
  assert.equal(a[0]?.user, "maria");
  assert.deepEqual(a[0]?.objectIds, [10]);
  assert.equal(h.liveStore("4").get().state, "live");
  assert.equal(h.liveStore("4").get().changes[0]?.version, 57);
  offA();
  offA(); // twice is once
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(h.connections(), 1, "b still listens");
  offB();
  await until(() => h.connections() === 0, "closed after the linger");
});

test("a dropped stream resumes with Last-Event-ID; heartbeats are not changes; a reset reaches the listeners only", async () => {
  const srv = fakeServer();
  const h = hub(srv.fetch);
  const got: LiveChange[] = [];
  const off = h.subscribe("7", (c) => got.push(c));
  const first = await srv.next();
  first.push(ev(3, "created", "maria") + ": heartbeat 3\n\n");
  await until(() => got.length === 1, "the first change");
  const states: string[] = [];
  h.liveStore("7").subscribe((x) => states.push(x.state));
  first.end();
  const s2 = await srv.next();
  await until(() => states.length === 2, "live again");
  assert.deepEqual(states, ["reconnecting", "live"]);
  assert.equal(s2.headers["Last-Event-ID"], "3");
  s2.push('id: 9\nevent: reset\ndata: {"version":9}\n\n' + ev(10, "deleted", "jo"));
  await until(() => got.length === 3, "the reset and the next change");
  assert.deepEqual(got.map((c) => `${c.kind}@${c.version}`), ["created@3", "reset@9", "deleted@10"]);
  assert.deepEqual(h.liveStore("7").get().changes.map((c) => c.version), [10, 3], "resets are not kept as changes");
  off();
  h.closeAll();
  assert.deepEqual(h.liveStore("7").get(), { state: "connecting", changes: [] }, "signing out forgets the changes");
});

test("a silent connection (no heartbeat) is dropped and reopened", async () => {
  const srv = fakeServer();
  const h = hub(srv.fetch, { idleMs: 30 });
  const off = h.subscribe("4", () => {});
  const first = await srv.next();
  first.push(ev(5, "updated", "maria"));
  const s2 = await srv.next();
  assert.equal(s2.headers["Last-Event-ID"], "5");
  off();
  h.closeAll();
});

test("network errors back off to offline; 401 ends the session; 503 waits for Retry-After", async () => {
  const srv = fakeServer();
  let unauthorized = 0;
  srv.errors.push(new TypeError("failed to fetch"), new TypeError("failed to fetch"));
  const h = hub(srv.fetch, { onUnauthorized: (t) => void (t === "tok" && unauthorized++) });
  const states: string[] = [];
  h.liveStore("4").subscribe((s) => states.push(s.state));
  const off = h.subscribe("4", () => {});
  const s = await srv.next();
  await until(() => states.length === 3, "live at last");
  assert.deepEqual(states, ["reconnecting", "offline", "live"]);
  s.end();
  srv.errors.push(new Response(JSON.stringify({ status: 401, detail: "the token expired" }), { status: 401 }));
  await until(() => unauthorized === 1, "401 reported");
  assert.equal(h.liveStore("4").get().state, "offline");
  assert.equal(h.liveStore("4").get().problem, "the token expired");
  off();
  h.closeAll();

  const srv2 = fakeServer();
  srv2.errors.push(new Response("{}", { status: 503, headers: { "Retry-After": "0.05" } }));
  const h2 = hub(srv2.fetch);
  const off2 = h2.subscribe("4", () => {});
  await srv2.next();
  await until(() => h2.liveStore("4").get().state === "live", "live after the 503");
  off2();
  h2.closeAll();
});

test("a change this tab wrote is own, even when its event arrives before the write's answer", async () => {
  const srv = fakeServer();
  const h = hub(srv.fetch);
  const got: LiveChange[] = [];
  const off = h.subscribe("4", (c) => got.push(c));
  const s = await srv.next();
  let answer!: (v: unknown) => void;
  h.noteWrite(new Promise((r) => (answer = r)));
  s.push(ev(21, "updated", "admin") + ev(22, "updated", "admin"));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(got.length, 0, "held while the write is in flight");
  answer({ status: 200, data: { transaction: { id: 21 } } });
  await until(() => got.length === 2, "delivered once it answered");
  assert.deepEqual(got.map((c) => [c.version, c.own]), [[21, true], [22, false]]);
  off();
  h.closeAll();
});

test("a comment this tab wrote is own once per noted write; another object's, another user's, or a second one, is not", async () => {
  const srv = fakeServer();
  const h = hub(srv.fetch);
  const got: LiveChange[] = [];
  const off = h.subscribe("4", (c) => got.push(c));
  const s = await srv.next();
  h.noteComment(10, "Admin");
  s.push(ev(30, "comment", "jonas", [10]) + ev(31, "comment", "admin", [11]) + ev(32, "comment", "admin", [10]) +
    ev(33, "comment", "admin", [10]) + ev(34, "updated", "admin", [10]));
  await until(() => got.length === 5, "all delivered");
  assert.deepEqual(got.map((c) => [c.version, c.own]), [[30, false], [31, false], [32, true], [33, false], [34, false]]);
  off();
  h.closeAll();
});

test("toChange reads the event's data and drops malformed data", () => {
  assert.equal(toChange("created", "not json"), null);
  assert.equal(toChange("created", "{}"), null);
  assert.deepEqual(toChange("reset", '{"version":9}', 1), { version: 9, kind: "reset", branch: 0, objectIds: [], types: [], user: "", at: 1, own: false });
});

test("a 401 for a token renewed meanwhile (another tab) retries with the successor", async () => {
  const srv = fakeServer();
  let token = "old";
  srv.errors.push(new Response("{}", { status: 401 }));
  const h = hub(srv.fetch, { token: () => token, onUnauthorized: () => void (token = "new") });
  const off = h.subscribe("4", () => {});
  const s = await srv.next();
  assert.equal(s.headers.Authorization, "Bearer new");
  off();
  h.closeAll();
});

test("a branch not indexed yet (404) is reconnecting, not offline, and goes live soon", async () => {
  const srv = fakeServer();
  srv.errors.push(new Response(JSON.stringify({ status: 404, detail: "branch 9 not found" }), { status: 404 }));
  const h = hub(srv.fetch, { maxRetryMs: 60_000 });
  const states: string[] = [];
  h.liveStore("9").subscribe((s) => states.push(s.state));
  const off = h.subscribe("9", () => {});
  const t0 = Date.now();
  await srv.next();
  await until(() => h.liveStore("9").get().state === "live", "live after the 404");
  assert.ok(Date.now() - t0 < 1000, `live ${Date.now() - t0} ms after the 404: it waited the longest retry`);
  assert.ok(!states.includes("offline"), `states ${states.join(", ")}`);
  off();
  h.closeAll();
});
