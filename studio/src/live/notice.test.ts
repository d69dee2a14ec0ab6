/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveChange } from "./changes";
import { noticeOf } from "./notice";

const c = (kind: string, own = false): LiveChange => ({ version: 9, kind, branch: 4, objectIds: [10], types: [1200], user: "maria", at: 1, own });

test("another's change reloads by itself when nothing is unsaved, and asks when something is", () => {
  assert.deepEqual(noticeOf(c("updated"), false), { kind: "updated", user: "maria", version: 9, at: 1, autoReload: true, offerReload: false, offerShowChanges: false });
  const n = noticeOf(c("updated"), true);
  assert.ok(n && !n.autoReload && n.offerReload && n.offerShowChanges, "unsaved edits are never overwritten silently");
});

test("own writes say nothing; comments and deletions never reload; a reset behaves like a change", () => {
  assert.equal(noticeOf(c("updated", true), true), null);
  for (const k of ["comment", "deleted", "branchDeleted"]) {
    const n = noticeOf(c(k), false);
    assert.ok(n && !n.autoReload && !n.offerReload, k);
  }
  assert.equal(noticeOf(c("reset"), false)?.autoReload, true);
  assert.equal(noticeOf(c("reset"), true)?.offerReload, true);
  assert.equal(noticeOf(c("created"), true)?.kind, "updated");
});
