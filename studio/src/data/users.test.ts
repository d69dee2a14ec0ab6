/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import type { BranchNode } from "./branches";
import { accountGrants, choiceOf, effective, grants, newUserBody, passwordProblem, sortUsers, toUser, userPatch } from "./users";

const node = (id: number, parent: number | undefined, depth: number): BranchNode => ({ id, name: `b${id}`, parent, depth, children: [] });
// 4 ─┬─ 10 ── 11
//    └─ 20
const tree = [node(4, undefined, 0), node(10, 4, 1), node(11, 10, 2), node(20, 4, 1)];

test("a user object reads as its name, flags, grants in stored order and disabled state", () => {
  const u = toUser({
    meta: { id: 7, typeRef: 110, deleted: true },
    values: [
      { attribute: 1100, language: 0, variant: 0, value: "carla" },
      { attribute: 1000, language: 202, variant: 0, value: "Carla B." },
      { attribute: 1102, language: 0, variant: 0, value: false },
      { attribute: 1103, language: 0, variant: 0, value: true },
      { attribute: 1104, language: 0, variant: 0, value: 20, sortReverse: 1 },
      { attribute: 1104, language: 0, variant: 0, value: 10, sortReverse: 0 },
      { attribute: 1105, language: 0, variant: 0, value: 11, sortReverse: 0 },
    ],
  }, [202, 201]);
  assert.deepEqual(u, { id: 7, userName: "carla", displayName: "Carla B.", admin: false, internal: true, read: [10, 20], write: [11], disabled: true });
});

test("users sort by user name without case", () => {
  const mk = (id: number, userName: string) => ({ id, userName, displayName: "", admin: false, internal: false, read: [], write: [], disabled: false });
  assert.deepEqual(sortUsers([mk(1, "bob"), mk(2, "Anna"), mk(3, "anna")]).map((u) => u.id), [2, 3, 1]);
});

test("the access chosen per branch becomes two grant lists, write not repeated as read, and back", () => {
  const c = new Map([[20, "read"], [10, "write"], [11, "none"]] as const);
  assert.deepEqual(grants(c), { read: [20], write: [10] });
  assert.deepEqual([...choiceOf([20, 10], [10])], [[20, "read"], [10, "write"]]);
});

test("a grant covers the branch's descendants; write wins over a read further up", () => {
  const e = effective(tree, [4], [10]);
  assert.deepEqual(e.get(4), { access: "read", from: 4 });
  assert.deepEqual(e.get(11), { access: "write", from: 10 });
  assert.deepEqual(e.get(20), { access: "read", from: 4 });
  assert.deepEqual(effective(tree, [20], []).get(10), { access: "none", from: 10 });
  // A cycle in the parents does not loop.
  const cyc = [{ ...node(1, 2, 0) }, { ...node(2, 1, 0) }];
  assert.deepEqual(effective(cyc, [], [2]).get(1), { access: "write", from: 2 });
});

test("a new user's body: user name, display name, password, flags and the grants as multi-valued rows", () => {
  const b = newUserBody({ userName: " dora ", displayName: "", password: "pw", admin: false, internal: false, choice: new Map([[11, "read"], [10, "read"]] as const) }, "c");
  assert.equal(b.objects[0]!.meta.typeRef, 110);
  assert.deepEqual(b.objects[0]!.values, [
    { attribute: 1100, language: 0, variant: 0, value: "dora" },
    { attribute: 1000, language: 201, variant: 0, value: "dora" },
    { attribute: 1101, language: 0, variant: 0, value: "pw" },
    { attribute: 1102, language: 0, variant: 0, value: false },
    { attribute: 1103, language: 0, variant: 0, value: false },
    { attribute: 1104, language: 0, variant: 0, value: 10, sortReverse: 0 },
    { attribute: 1104, language: 0, variant: 0, value: 11, sortReverse: 1 },
  ]);
});

test("a change replaces both grant lists (an emptied one as a null row), resets a password, enables", () => {
  const p = userPatch(7, { admin: true, choice: new Map([[20, "write"]] as const), password: "new", enable: true }, "c");
  assert.deepEqual(p.objects[0]!.meta, { id: 7, typeRef: 110, deleted: false });
  assert.deepEqual(p.objects[0]!.values, [
    { attribute: 1102, language: 0, variant: 0, value: true },
    { attribute: 1104, language: 0, variant: 0, value: null },
    { attribute: 1105, language: 0, variant: 0, value: 20, sortReverse: 0 },
    { attribute: 1101, language: 0, variant: 0, value: "new" },
  ]);
  assert.deepEqual(userPatch(7, { internal: false }, "c").objects[0]!.meta, { id: 7, typeRef: 110 });
});

test("a new password follows the API's rules: not empty, at most 72 UTF-8 bytes, repeated alike", () => {
  assert.equal(passwordProblem("  ", "  "), "empty");
  assert.equal(passwordProblem("é".repeat(37), "é".repeat(37)), "long");
  assert.equal(passwordProblem("x".repeat(72), "x".repeat(72)), undefined);
  assert.equal(passwordProblem("abc", "abd"), "mismatch");
});

test("an account's grants list the branches it reaches, with where the access comes from", () => {
  const g = accountGrants({ userName: "carla", readBranches: [10], writeBranches: [20] }, tree);
  assert.deepEqual(g.map((x) => [x.branch.id, x.access, x.from]), [[10, "read", 10], [11, "read", 10], [20, "write", 20]]);
  assert.equal(accountGrants({ admin: true }, tree).length, 4);
});
