/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { ago, others } from "./activity";
import type { LiveChange } from "./changes";

const c = (version: number, own: boolean, kind = "updated"): LiveChange =>
  ({ version, kind, branch: 4, objectIds: [1], types: [2], user: "maria", at: 0, own });

test("others leaves out this tab's writes and resets", () => {
  assert.deepEqual(others([c(3, false), c(2, true), c(1, false, "reset")]).map((x) => x.version), [3]);
});

test("ago says now, then minutes, hours and days", () => {
  assert.deepEqual(ago(0, 59_000), { unit: "now" });
  assert.deepEqual(ago(0, 61_000), { unit: "minute", n: 1 });
  assert.deepEqual(ago(0, 2 * 3600_000 + 5), { unit: "hour", n: 2 });
  assert.deepEqual(ago(0, 3 * 86400_000), { unit: "day", n: 3 });
  assert.deepEqual(ago(10_000, 0), { unit: "now" }, "a clock step back is now");
});
