/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError, OfflineError } from "../api/client";
import { accessOf, grantsMayHaveChanged, nextAccess, userObjectType } from "./access";

test("the empty write's answer tells read-only from writable", () => {
  assert.deepEqual(accessOf(new ApiError(403, { detail: 'user "rita" has no write permission on branch 9' }, undefined)),
    { kind: "read", detail: 'user "rita" has no write permission on branch 9', revoked: false });
  assert.deepEqual(accessOf(new ApiError(400, { detail: "invalid request: no objects given" }, undefined)), { kind: "write" });
  // Not known (offline, a server error): not read-only; a save will say what happens.
  assert.deepEqual(accessOf(new OfflineError(new TypeError("Failed to fetch"))), { kind: "write" });
  assert.deepEqual(accessOf(new ApiError(503, {}, undefined)), { kind: "write" });
});

test("a grant removed while open stays explained as removed", () => {
  const revoked = { kind: "read", detail: "x", revoked: true } as const;
  assert.equal(nextAccess(revoked, { kind: "read", detail: "y", revoked: false }), revoked);
  assert.deepEqual(nextAccess(revoked, { kind: "write" }), { kind: "write" });
  assert.deepEqual(nextAccess({ kind: "checking" }, { kind: "read", revoked: false }), { kind: "read", revoked: false });
});

test("a grant seen and then missing on a re-check is revoked (found by the check); given back it is write again", () => {
  const missing = { kind: "read", detail: "no write permission", revoked: false } as const;
  assert.deepEqual(nextAccess({ kind: "write" }, missing), { kind: "read", detail: "no write permission", revoked: true, by: "check" });
  const found = nextAccess({ kind: "write" }, missing);
  assert.equal(nextAccess(found, missing), found);
  assert.deepEqual(nextAccess(found, { kind: "write" }), { kind: "write" });
  // A save's refusal stays a save's refusal on the next check.
  const refused = { kind: "read", revoked: true, by: "save" } as const;
  assert.equal(nextAccess(refused, missing), refused);
  // Never known writable: a reader, not a removed grant.
  assert.deepEqual(nextAccess(missing, missing), missing);
});

test("the access is asked again after a change of a user object, the own one, or a reset; not after content", () => {
  const c = (kind: string, objectIds: number[], types: number[]) => ({ kind, objectIds, types });
  assert.equal(grantsMayHaveChanged(c("updated", [77], [userObjectType])), true);
  assert.equal(grantsMayHaveChanged(c("updated", [77], [9001]), 77), true);
  assert.equal(grantsMayHaveChanged(c("reset", [], [])), true);
  assert.equal(grantsMayHaveChanged(c("updated", [12], [9001]), 77), false);
  assert.equal(grantsMayHaveChanged(c("created", [12], [9001])), false);
  assert.equal(grantsMayHaveChanged(c("updated", [0], [9001]), 0), false);
});
