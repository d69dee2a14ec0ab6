/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseMetrics } from "./metrics";
import { groupOf, loadSnapshot, MetricsUnreadable, readReadiness, requestRates, snapshotOf } from "./operations";

const scrape = (calls: number, extra = "") => parseMetrics(`cms_component_up{component="search"} 1
cms_component_up{component="blobs"} 1
cms_component_up{component="cache"} 0
cms_component_up{component="store"} 1
cms_component_up{component="events"} 1
cms_grpc_calls_total{code="OK",method="/cms.management.v1.ManagementService/GetObject"} ${calls}
cms_grpc_calls_total{code="Unavailable",method="/cms.delivery.v1.DeliveryService/GetObject"} 2
cms_grpc_calls_total{code="NotFound",method="/cms.delivery.v1.DeliveryService/GetObject"} 5
cms_grpc_calls_total{code="Internal",method="/grpc.health.v1.Health/Check"} 1
cms_shed_total{group="delivery"} 2
cms_shed_total{group="login"} 1
cms_indexer_lag_events 4
cms_indexer_lag_seconds 1.5
cms_indexer_parked_events 3
cms_live_subscribers 7
cms_jobs_running 1
cms_jobs_pending -1
${extra}`);

test("groupOf is the API group of a gRPC method", () => {
  assert.equal(groupOf("/cms.management.v1.ManagementService/GetObject"), "management");
  assert.equal(groupOf("/cms.index.v1.IndexService/Query"), "index");
  assert.equal(groupOf("/grpc.health.v1.Health/Check"), "other");
  assert.equal(groupOf(""), "other");
});

test("readiness: ready, or not with /readyz's reason", () => {
  assert.deepEqual(readReadiness(200, "ready\nindexer: lag 0 events, 0.0 s\n"), { ready: true });
  assert.deepEqual(readReadiness(503, "not ready: search: connection refused\nindexer: lag 2 events, 1.0 s\n"), { ready: false, reason: "search: connection refused" });
  assert.deepEqual(readReadiness(502, ""), { ready: false, reason: "HTTP 502" });
});

test("a snapshot: components in order with down ones marked, lag, parked, requests per group, 5xx and shed", () => {
  const s = snapshotOf(scrape(10), { ready: true }, 1000);
  assert.deepEqual(s.components, [
    { name: "store", up: true }, { name: "events", up: true }, { name: "search", up: true }, { name: "cache", up: false }, { name: "blobs", up: true },
  ]);
  assert.deepEqual(s.lag, { events: 4, seconds: 1.5 });
  assert.equal(s.parked, 3);
  assert.deepEqual(s.requests, { management: 10, delivery: 7, other: 1 });
  assert.equal(s.serverErrors, 3); // Unavailable 2 + Internal 1; NotFound is a 4xx
  assert.equal(s.shed, 3);
  assert.equal(s.subscribers, 7);
  assert.deepEqual(s.jobs, { running: 1 }); // the queue did not answer (-1): pending not known
});

test("a process without indexer, stream or jobs reports them as absent, not as zero", () => {
  const s = snapshotOf(parseMetrics(`cms_indexer_parked_events -1\ncms_grpc_calls_total{code="OK",method="/cms.delivery.v1.D/G"} 1\n`), null, 0);
  assert.equal(s.lag, undefined);
  assert.equal(s.parked, undefined);
  assert.equal(s.subscribers, undefined);
  assert.equal(s.jobs, undefined);
  assert.equal(s.shed, 0);
  assert.deepEqual(s.components, []);
});

test("request rates between two snapshots; none from the first, none across a restart", () => {
  const a = snapshotOf(scrape(10), null, 1000);
  const b = snapshotOf(scrape(40, `cms_grpc_calls_total{code="OK",method="/cms.index.v1.IndexService/Query"} 6`), null, 4000);
  assert.deepEqual(requestRates(null, a), { management: undefined, delivery: undefined, other: undefined });
  assert.deepEqual(requestRates(a, b), { management: 10, delivery: 0, other: 0, index: 2 });
  assert.equal(requestRates(b, snapshotOf(scrape(3), null, 7000)).management, undefined);
});

test("loadSnapshot reads /readyz and /metrics without credentials; an unreachable /readyz is null, a refused /metrics an error", async () => {
  const seen: { url: string; init: RequestInit | undefined }[] = [];
  const answers: Record<string, () => Promise<Response>> = {
    "/readyz": async () => new Response("not ready: cache: refused\n", { status: 503 }),
    "/metrics": async () => new Response('cms_component_up{component="cache"} 0\n'),
  };
  const fetcher = (async (url: string, init?: RequestInit) => {
    seen.push({ url, init });
    return answers[new URL(url).pathname]!();
  }) as typeof fetch;
  const s = await loadSnapshot("http://h", new AbortController().signal, fetcher);
  assert.deepEqual(s.readiness, { ready: false, reason: "cache: refused" });
  assert.deepEqual(s.components, [{ name: "cache", up: false }]);
  assert.deepEqual(seen.map((x) => [x.url, x.init?.credentials]), [["http://h/readyz", "omit"], ["http://h/metrics", "omit"]]);

  answers["/readyz"] = async () => { throw new TypeError("offline"); };
  assert.equal((await loadSnapshot("http://h", new AbortController().signal, fetcher)).readiness, null);

  answers["/metrics"] = async () => new Response("no", { status: 404 });
  await assert.rejects(loadSnapshot("http://h", new AbortController().signal, fetcher), (e: unknown) => e instanceof MetricsUnreadable && e.status === 404);
});
