/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError, OfflineError } from "../api/client";
import { accessOf, nextAccess } from "./access";

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
