/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError } from "../api/client";
import type { CmsObject } from "../api/generated/management";
import { formatDuration, mergePage, newSecret, parseAttempt, parseWebhook, urlProblem, W, webhookRows, type Webhook } from "./webhooks";

const v = (attribute: number, value: unknown, language = 0, sortReverse = 0) => ({ attribute, language, variant: 0, value, sortReverse });

test("a definition reads its name, URL, filters in stored order and enabled; it has no secret", () => {
  const o: CmsObject = {
    meta: { id: 11007, typeRef: 210 },
    values: [v(W.name, "Shop", 202), v(W.name, "Shop EN", 201), v(W.url, "https://hooks.example/in"),
      v(W.branches, 12, 0, 1), v(W.branches, 4, 0, 0), v(W.kinds, "deleted", 0, 1), v(W.kinds, "created", 0, 0), v(W.enabled, true)],
  };
  assert.deepEqual(parseWebhook(o, [202, 201]), {
    id: 11007, name: "Shop", url: "https://hooks.example/in", branches: [4, 12], types: [], kinds: ["created", "deleted"], enabled: true,
  });
  assert.equal(parseWebhook(o, [201]).name, "Shop EN");
  assert.equal(parseWebhook({ meta: { id: 1 }, values: [] }).enabled, false);
});

test("create sends every setting and the secret, empty filters left out", () => {
  const rows = webhookRows({ name: " Shop ", url: "https://h.example/x ", branches: [], types: [7, 9], kinds: [], enabled: true, secret: "abc" });
  assert.deepEqual(rows, [v(W.name, "Shop", 201), v(W.url, "https://h.example/x"), v(W.secret, "abc"),
    v(W.types, 7, 0, 0), v(W.types, 9, 0, 1), v(W.enabled, true)]);
});

test("update sends only what changed: a cleared filter as one null row, a reordered one whole, never the secret", () => {
  const before: Webhook = { id: 5, name: "Shop", url: "https://h.example/x", branches: [4], types: [7, 9], kinds: ["created"], enabled: true };
  assert.deepEqual(webhookRows({ ...before, secret: "new" }, before), []);
  assert.deepEqual(webhookRows({ ...before, branches: [], types: [9, 7], enabled: false }, before), [
    v(W.branches, null), v(W.types, 9, 0, 0), v(W.types, 7, 0, 1), v(W.enabled, false)]);
  assert.deepEqual(webhookRows({ ...before, name: "", url: "https://other.example/" }, before), [v(W.name, null, 201), v(W.url, "https://other.example/")]);
});

test("receiver URLs: absolute http(s) only", () => {
  assert.equal(urlProblem("https://hooks.example/in"), "");
  assert.equal(urlProblem("http://127.0.0.1:8080/x"), "");
  assert.equal(urlProblem("  "), "required");
  assert.equal(urlProblem("ftp://h.example/"), "scheme");
  assert.equal(urlProblem("javascript:alert(1)"), "scheme");
  assert.equal(urlProblem("/relative"), "invalid");
});

test("a secret is n random bytes as hex", () => {
  assert.equal(newSecret(4, (b) => b.fill(0xab)), "abababab");
  const s = newSecret();
  assert.match(s, /^[0-9a-f]{64}$/);
  assert.notEqual(s, newSecret());
});

test("attempts: the log's rows, tests marked, durations in words, pages merged without repeats", () => {
  const a = parseAttempt({ id: 9, deliveryId: "test-1-5", kind: "test", attempt: 1, time: "2026-12-03T10:00:00Z", durationMs: 3.25, status: 200, outcome: "accepted" });
  assert.equal(a.test, true);
  assert.equal(a.error, null);
  const b = parseAttempt({ id: 8, kind: "created", status: 0, error: "dial tcp: connection refused", outcome: "failed" });
  assert.deepEqual([b.test, b.status, b.error, b.attempt], [false, 0, "dial tcp: connection refused", 1]);
  const fmt = (n: number, d: number) => n.toFixed(d);
  assert.equal(formatDuration(3.25, fmt), "3.3 ms");
  assert.equal(formatDuration(123.4, fmt), "123 ms");
  assert.equal(formatDuration(1530, fmt), "1.5 s");
  assert.deepEqual(mergePage([a, b], [b, { ...b, id: 7 }]).map((x) => x.id), [9, 8, 7]);
});

