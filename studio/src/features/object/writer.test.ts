/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveChange } from "../../live/changes";
import { pickWriter } from "./writer";

const live = (version: number, user: string, own = false): LiveChange =>
  ({ version, kind: "updated", branch: 4, objectIds: [9], types: [], user, at: Date.parse("2026-12-02T08:00:00Z"), own });

test("the index's record names the writer once it has reached the transaction", () => {
  assert.deepEqual(pickWriter(120, { id: 9, modifiedBy: "maria", modified: "2026-12-02T07:59:58Z" }, 120, undefined),
    { user: "maria", at: "2026-12-02T07:59:58Z", transaction: 120 });
});

test("an index behind the transaction does not name an older writer: the live change does", () => {
  assert.deepEqual(pickWriter(120, { id: 9, modifiedBy: "admin" }, 119, live(120, "maria")),
    { user: "maria", at: "2026-12-02T08:00:00.000Z", transaction: 120 });
  // Not an older change, not this tab's own.
  assert.deepEqual(pickWriter(120, undefined, undefined, live(118, "maria")), { user: "", transaction: 120 });
  assert.deepEqual(pickWriter(120, undefined, undefined, live(121, "me", true)), { user: "", transaction: 120 });
  assert.equal(pickWriter(undefined, undefined, undefined, undefined), null);
});
