/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { maxMetricsChars, MetricsFormatError, parseMetrics, sum } from "./metrics";

const text = `# HELP cms_component_up Whether a component answered.
# TYPE cms_component_up gauge
cms_component_up{component="search"} 1
cms_component_up{component="store"} 0
# TYPE cms_grpc_calls_total counter
cms_grpc_calls_total{code="OK",method="/cms.management.v1.ManagementService/GetObject"} 12
cms_grpc_calls_total{code="Internal",method="/cms.management.v1.ManagementService/UpdateObjects"} 3
cms_indexer_lag_seconds 0.25
go_gc_duration_seconds{quantile="0.5"} NaN
weird{a="quote \\" back \\\\ nl \\n",b="x, y}"} +Inf 1712345678000
`;

test("samples: names, labels (escapes, commas and braces in values), values and timestamps", () => {
  const s = parseMetrics(text);
  assert.equal(s.length, 7);
  assert.deepEqual(s[0], { name: "cms_component_up", labels: { component: "search" }, value: 1 });
  assert.deepEqual(s[3]?.labels, { code: "Internal", method: "/cms.management.v1.ManagementService/UpdateObjects" });
  assert.equal(s[4]?.value, 0.25);
  assert.ok(Number.isNaN(s[5]?.value));
  assert.deepEqual(s[6], { name: "weird", labels: { a: 'quote " back \\ nl \n', b: "x, y}" }, value: Infinity });
});

test("keep drops other metrics before their labels are read", () => {
  const s = parseMetrics(text + "broken{ 1\n", (n) => n.startsWith("cms_"));
  assert.deepEqual([...new Set(s.map((x) => x.name))], ["cms_component_up", "cms_grpc_calls_total", "cms_indexer_lag_seconds"]);
});

test("sum adds matching samples; undefined when the metric is missing", () => {
  const s = parseMetrics(text);
  assert.equal(sum(s, "cms_grpc_calls_total"), 15);
  assert.equal(sum(s, "cms_grpc_calls_total", (l) => l.code === "OK"), 12);
  assert.equal(sum(s, "cms_component_up", (l) => l.component === "cache"), undefined);
  assert.equal(sum(s, "cms_nothing"), undefined);
});

test("a malformed line is an error naming the line, not a misread number", () => {
  for (const [bad, line] of [
    ['cms_x{a="1"', 1],
    ["ok 1\ncms_x one", 2],
    ['cms_x{a=1} 2', 1],
    ['cms_x{a="1" b="2"} 2', 1],
    ["cms_x 1 2 3", 1],
    ["{a=\"1\"} 2", 1],
    ["cms_x", 1],
  ] as const) {
    assert.throws(() => parseMetrics(bad), (e: unknown) => e instanceof MetricsFormatError && e.message.startsWith(`metrics line ${line}:`), bad);
  }
});

test("text beyond maxMetricsChars is refused", () => {
  assert.throws(() => parseMetrics("a 1\n".repeat(maxMetricsChars / 4 + 1)), MetricsFormatError);
  assert.equal(parseMetrics("a 1\n".repeat(1000)).length, 1000);
});
