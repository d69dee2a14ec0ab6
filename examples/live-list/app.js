// Live list: lists one type's objects through the Delivery API and keeps
// the list current from the branch's change stream
// (GET /delivery/api/branches/{branch}/changes, server-sent events).
//
// The browser's EventSource cannot send an Authorization header, so the
// stream is read with fetch() and a ReadableStream, and parsed here (a few
// lines: see readEvents). Sending Authorization cross-origin is also what
// makes the browser ask the API for permission first (the CORS preflight);
// the API must list this page's origin (corsOrigins, see README.md).
"use strict";

// Objects listed at most (Delivery pages of pageSize): a demo, not a pager.
const maxObjects = 5000;
const pageSize = 1000;
// Reconnection delay when the stream ends without saying otherwise (the
// server's "retry:" field replaces it).
const defaultRetryMs = 2000;
// Changes that make the list stale; comments and other kinds are counted
// but do not reload it.
const listKinds = ["created", "updated", "deleted", "branchDeleted", "reset"];

const $ = (id) => document.getElementById(id);
let current = null; // AbortController of the running connection

$("config").addEventListener("submit", (e) => {
  e.preventDefault();
  if (current) current.abort();
  current = new AbortController();
  const f = e.target.elements;
  const cfg = {
    base: f.base.value.trim().replace(/\/+$/, "") + "/delivery/api",
    auth: "Basic " + base64(f.user.value + ":" + f.password.value),
    branch: encodeURIComponent(f.branch.value.trim()),
    type: f.type.value.trim(),
  };
  $("changes").textContent = "0";
  $("version").textContent = "none";
  $("objects").replaceChildren();
  const signal = current.signal;
  follow(cfg, signal).catch((err) => {
    if (!signal.aborted) setStatus("error", describe(err));
  });
});

// follow opens the change stream, loads the list once the stream has
// started (so no change between the two is missed), then reloads it on
// every change; after a dropped connection it resumes with Last-Event-ID.
async function follow(cfg, signal) {
  const typeId = await resolveTypeId(cfg, signal);
  const list = new ListLoader(cfg, signal);
  let lastId = "";
  let retryMs = defaultRetryMs;
  const url = `${cfg.base}/branches/${cfg.branch}/changes?types=${typeId}&` +
    listKinds.filter((k) => k !== "reset").map((k) => "kinds=" + k).join("&");
  for (;;) {
    setStatus("connecting", lastId ? `Reconnecting after version ${lastId}…` : "Connecting…");
    let waitMs = retryMs;
    try {
      const headers = { Authorization: cfg.auth, Accept: "text/event-stream" };
      if (lastId) headers["Last-Event-ID"] = lastId;
      const resp = await fetch(url, { headers, signal, cache: "no-store" });
      if (resp.status === 503) {
        waitMs = 1000 * (Number(resp.headers.get("Retry-After")) || retryMs / 1000);
        throw new Error(await problemText(resp));
      }
      if (!resp.ok) {
        setStatus("error", await problemText(resp)); // wrong credentials, no grant, unknown branch
        return;
      }
      // Without a position the changes before this connection are unknown:
      // (re)load the list now that the stream runs.
      if (!lastId) await list.reload();
      const live = () => setStatus("live", `Live from ${cfg.base}: ${list.count} objects of ${cfg.type}.`);
      live();
      await readEvents(resp.body, signal, (ev) => {
        if (ev.retry) {
          retryMs = ev.retry;
          return;
        }
        if (ev.id) lastId = ev.id;
        $("version").textContent = lastId || "none";
        if (ev.event !== "reset") $("changes").textContent = String(Number($("changes").textContent) + 1);
        if (listKinds.includes(ev.event)) {
          list.reload(ev.data.version).then(live,
            (err) => signal.aborted || setStatus("error", describe(err)));
        }
      });
    } catch (err) {
      if (signal.aborted) return;
      setStatus("connecting", `Stream interrupted (${describe(err)}); retrying.`);
    }
    await sleep(waitMs, signal);
    if (signal.aborted) return;
  }
}

// readEvents parses a text/event-stream body and calls onEvent with
// {id, event, data} for each event and {retry} for a reconnection delay;
// comments (heartbeats) are skipped. It returns when the stream ends.
async function readEvents(body, signal, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buf = "";
  let ev = { id: "", event: "message", data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      if (buf[nl] === "\r" && nl === buf.length - 1) break; // a \r\n may be split across chunks
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
      if (line === "") {
        if (ev.data.length) onEvent({ id: ev.id, event: ev.event, data: JSON.parse(ev.data.join("\n")) });
        ev = { id: ev.id, event: "message", data: [] }; // the id carries over, as in EventSource
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") ev.data.push(val);
      else if (field === "event") ev.event = val;
      else if (field === "id") ev.id = val;
      else if (field === "retry" && /^\d+$/.test(val)) onEvent({ retry: Number(val) });
    }
  }
}

// ListLoader reloads the list; reloads asked for while one runs are
// merged into one more run after it, so a burst of changes costs at most
// two requests and the last one sees every change.
//
// A reload for a change asks for at least the change's version
// (X-Cms-Min-Version, read-your-writes): the event says the index has it,
// but the answer may come from a response cache not invalidated yet, or
// from another server behind a load balancer whose index lags.
class ListLoader {
  constructor(cfg, signal) {
    this.cfg = cfg;
    this.signal = signal;
    this.running = null;
    this.again = false;
    this.count = 0;
    this.minVersion = 0;
  }

  reload(minVersion = 0) {
    this.minVersion = Math.max(this.minVersion, minVersion);
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.load();
        } while (this.again);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async load() {
    const objs = [];
    const headers = this.minVersion ? { "X-Cms-Min-Version": String(this.minVersion) } : {};
    let more = true;
    while (more && objs.length < maxObjects) {
      const page = await getJSON(this.cfg, `/branches/${this.cfg.branch}/types/${encodeURIComponent(this.cfg.type)}` +
        `/objects?skip=${objs.length}&take=${pageSize}`, this.signal, headers);
      objs.push(...page.objs);
      more = page.more && page.objs.length > 0;
    }
    this.count = objs.length;
    $("objects").replaceChildren(...objs.map(item));
  }
}

function item(obj) {
  const li = document.createElement("li");
  li.dataset.id = obj.meta.id;
  li.dataset.version = obj.meta.lastTransaction;
  li.textContent = obj.displayName || `#${obj.meta.id}`;
  const meta = document.createElement("span");
  meta.textContent = ` #${obj.meta.id}, version ${obj.meta.lastTransaction}`;
  li.append(meta);
  return li;
}

// resolveTypeId finds the id of the type (the stream filters by type id):
// digits are an id already, else the type whose ApiIdentifier matches.
async function resolveTypeId(cfg, signal) {
  if (/^\d+$/.test(cfg.type)) return cfg.type;
  const types = await getJSON(cfg, `/branches/${cfg.branch}/config/types`, signal);
  const t = types.find((o) => (o.meta.apiIdentifier || "").toLowerCase() === cfg.type.toLowerCase());
  if (!t) throw new Error(`no type with the ApiIdentifier "${cfg.type}" on branch ${decodeURIComponent(cfg.branch)}`);
  return t.meta.id;
}

async function getJSON(cfg, path, signal, headers = {}) {
  const resp = await fetch(cfg.base + path, {
    headers: { ...headers, Authorization: cfg.auth, Accept: "application/json" }, signal, cache: "no-store",
  });
  if (!resp.ok) throw new Error(await problemText(resp));
  return resp.json();
}

// problemText turns an RFC 7807 answer into one line.
async function problemText(resp) {
  let p = {};
  try {
    p = await resp.json();
  } catch { /* not JSON */ }
  return `${resp.status} ${p.title || resp.statusText}${p.detail ? ": " + p.detail : ""}`;
}

// describe explains an error; a fetch the browser refused (CORS, a wrong
// address) is a TypeError without details, for security reasons.
function describe(err) {
  if (err instanceof TypeError) {
    return `${err.message}: is the API address right, and does its corsOrigins list ${location.origin}?`;
  }
  return String(err.message || err);
}

function setStatus(state, text) {
  $("status").dataset.state = state;
  $("status").textContent = text;
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// base64 of a UTF-8 string (btoa alone accepts Latin-1 only).
function base64(s) {
  return btoa(String.fromCharCode(...new TextEncoder().encode(s)));
}
