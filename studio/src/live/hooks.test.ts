/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveChange } from "./changes";
import { touchesObject, touchesType } from "./hooks";

const c = (kind: string, objectIds: number[], types: number[]): LiveChange =>
  ({ version: 1, kind, branch: 4, objectIds, types, user: "maria", at: 0, own: false });

test("a change touches its objects and their types; resets and branch deletions touch everything", () => {
  assert.ok(touchesObject(c("updated", [10, 11], [1200]), 11));
  assert.ok(!touchesObject(c("updated", [10], [1200]), 11));
  assert.ok(touchesType(c("created", [10], [1200, 1201]), 1201));
  assert.ok(!touchesType(c("created", [10], [1200]), 1300));
  assert.ok(touchesObject(c("reset", [], []), 11) && touchesType(c("reset", [], []), 1300));
  assert.ok(touchesObject(c("branchDeleted", [7], []), 11) && touchesType(c("branchDeleted", [7], []), 1300));
});
