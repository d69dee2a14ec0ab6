/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveChange } from "./changes";
import { concernsAll, touchesObject, touchesType } from "./hooks";

const c = (kind: string, objectIds: number[], types: number[]): LiveChange =>
  ({ version: 1, kind, branch: 4, objectIds, types, user: "maria", at: 0, own: false });

test("a change touches its objects and their types; a reset touches everything", () => {
  assert.ok(touchesObject(c("updated", [10, 11], [1200]), "4", 11));
  assert.ok(!touchesObject(c("updated", [10], [1200]), "4", 11));
  assert.ok(touchesType(c("created", [10], [1200, 1201]), "4", 1201));
  assert.ok(!touchesType(c("created", [10], [1200]), "4", 1300));
  assert.ok(touchesObject(c("reset", [], []), "4", 11) && touchesType(c("reset", [], []), "4", 1300));
});

test("a branch deletion concerns the views of that branch only (a sibling's does not)", () => {
  assert.ok(touchesObject(c("branchDeleted", [7], []), "7", 11) && touchesType(c("branchDeleted", [7], []), "7", 1300));
  assert.ok(!touchesObject(c("branchDeleted", [8], []), "7", 8), "the deleted branch's id is not an object of the view");
  assert.ok(!concernsAll(c("branchDeleted", [8], []), "7"));
  assert.ok(concernsAll(c("branchDeleted", [8], []), "campaign"), "an ApiIdentifier cannot be compared: passed on");
});
