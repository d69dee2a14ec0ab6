// What the Operations view shows, read from what every process serves
// without credentials (docs/operations.md): /readyz (text: "ready" or
// "not ready: …", then detail lines such as the indexer's lag) and
// /metrics (Prometheus text). Both describe the process that serves the
// studio: in a split deployment the indexer's lag is on the indexer's
// process, and the view says it is not reported here.
import { parseMetrics, sum, type Sample } from "./metrics";

/** The components a process may use, in the order the view lists them (others follow, by name). */
export const componentOrder = ["store", "events", "search", "cache"];

/** The gRPC codes the HTTP gateway answers with a 5xx status. */
export const serverErrorCodes = new Set(["Unknown", "Internal", "DataLoss", "Unavailable", "DeadlineExceeded", "Unimplemented"]);

export interface Readiness {
  ready: boolean;
  /** Why not, as /readyz says it. */
  reason?: string;
}

/** Snapshot is one reading of the process's state. */
export interface Snapshot {
  /** When it was read (ms since the epoch). */
  at: number;
  /** null: /readyz did not answer. */
  readiness: Readiness | null;
  /** Each component's ping at the scrape (cms_component_up). */
  components: { name: string; up: boolean }[];
  /** The indexer's lag; undefined when this process runs no indexer. */
  lag?: { events: number; seconds: number };
  /** Change events in the parked list; undefined without an indexer or before it read the list (-1). */
  parked?: number;
  /** gRPC calls handled so far, by group (management, delivery, index, rendering). */
  requests: Record<string, number>;
  /** Calls answered with a 5xx so far (shed requests included). */
  serverErrors: number;
  /** Requests refused because the server was overloaded, so far. */
  shed: number;
  /** Open change stream subscriptions; undefined when this process serves no stream. */
  subscribers?: number;
  /** Jobs queued or running (every process; undefined when the queue did not answer) and running here. */
  jobs?: { pending?: number; running: number };
}

/** groupOf is the API group of a gRPC method ("/cms.management.v1.ManagementService/GetObject" → "management"). */
export function groupOf(method: string): string {
  const parts = method.replace(/^\//, "").split(".");
  return parts.length >= 3 && parts[0] === "cms" && parts[1] ? parts[1] : "other";
}

/** readReadiness reads a /readyz answer. */
export function readReadiness(status: number, text: string): Readiness {
  const first = (text.split("\n")[0] ?? "").trim();
  if (status === 200) return { ready: true };
  return { ready: false, reason: first.replace(/^not ready:\s*/, "") || `HTTP ${status}` };
}

/** snapshotOf turns the samples of one scrape into a Snapshot. */
export function snapshotOf(samples: readonly Sample[], readiness: Readiness | null, at: number): Snapshot {
  const components = samples
    .filter((s) => s.name === "cms_component_up" && s.labels.component)
    .map((s) => ({ name: s.labels.component ?? "", up: s.value === 1 }))
    .sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
  const requests: Record<string, number> = {};
  let serverErrors = 0;
  for (const s of samples) {
    if (s.name !== "cms_grpc_calls_total") continue;
    const g = groupOf(s.labels.method ?? "");
    requests[g] = (requests[g] ?? 0) + s.value;
    if (serverErrorCodes.has(s.labels.code ?? "")) serverErrors += s.value;
  }
  const snap: Snapshot = { at, readiness, components, requests, serverErrors, shed: sum(samples, "cms_shed_total") ?? 0 };
  const lagEvents = sum(samples, "cms_indexer_lag_events");
  const lagSeconds = sum(samples, "cms_indexer_lag_seconds");
  if (lagEvents !== undefined && lagSeconds !== undefined) snap.lag = { events: lagEvents, seconds: lagSeconds };
  const parked = sum(samples, "cms_indexer_parked_events");
  if (parked !== undefined && parked >= 0) snap.parked = parked;
  const subscribers = sum(samples, "cms_live_subscribers");
  if (subscribers !== undefined) snap.subscribers = subscribers;
  const running = sum(samples, "cms_jobs_running");
  if (running !== undefined) {
    const pending = sum(samples, "cms_jobs_pending");
    snap.jobs = pending === undefined || pending < 0 ? { running } : { pending, running };
  }
  return snap;
}

function rank(name: string): number {
  const i = componentOrder.indexOf(name);
  return i < 0 ? componentOrder.length : i;
}

/** The series the view reads; the parser drops the rest. */
const wanted = new Set([
  "cms_component_up", "cms_grpc_calls_total", "cms_shed_total", "cms_indexer_lag_events", "cms_indexer_lag_seconds",
  "cms_indexer_parked_events", "cms_live_subscribers", "cms_jobs_running", "cms_jobs_pending",
]);

/** ratePerSecond is how fast a counter grew between two snapshots; undefined without two or after a reset (restart). */
export function ratePerSecond(prev: number | undefined, cur: number | undefined, seconds: number): number | undefined {
  if (prev === undefined || cur === undefined || seconds <= 0 || cur < prev) return undefined;
  return (cur - prev) / seconds;
}

/** requestRates are the requests per second of each group between two snapshots. */
export function requestRates(prev: Snapshot | null, cur: Snapshot): Record<string, number | undefined> {
  const out: Record<string, number | undefined> = {};
  const dt = prev ? (cur.at - prev.at) / 1000 : 0;
  for (const g of Object.keys(cur.requests)) out[g] = ratePerSecond(prev?.requests[g] ?? (prev ? 0 : undefined), cur.requests[g], dt);
  return out;
}

/** The refresh interval of the open view. */
export const refreshEvery = 3000;

/** MetricsUnreadable: /metrics did not answer 200 (the view shows why). */
export class MetricsUnreadable extends Error {
  constructor(readonly status: number) {
    super(`/metrics answered ${status}`);
    this.name = "MetricsUnreadable";
  }
}

/** loadSnapshot reads /readyz and /metrics of the studio's origin (no credentials: both are public). */
export async function loadSnapshot(origin: string, signal: AbortSignal, fetcher: typeof fetch = fetch): Promise<Snapshot> {
  const get = (path: string) => fetcher(origin + path, { signal, credentials: "omit", cache: "no-store", headers: { Accept: "text/plain" } });
  const [ready, metrics] = await Promise.all([
    get("/readyz").then(async (r) => readReadiness(r.status, await r.text()), (e: unknown) => {
      if (signal.aborted) throw e;
      return null; // the process did not answer: the view says so
    }),
    get("/metrics"),
  ]);
  if (!metrics.ok) throw new MetricsUnreadable(metrics.status);
  return snapshotOf(parseMetrics(await metrics.text(), (n) => wanted.has(n)), ready, Date.now());
}
