/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError, OfflineError } from "../api/client";
import { accessOf, grantsMayHaveChanged, nextAccess } from "./access";
import { userType } from "./types";

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

test("the access is asked again after a change of the own user object or a reset; not after another user's or content", () => {
  const c = (kind: string, objectIds: number[], types: number[]) => ({ kind, objectIds, types });
  // The own user object (77) changed: its grants may have.
  assert.equal(grantsMayHaveChanged(c("updated", [77], [userType]), 77), true);
  assert.equal(grantsMayHaveChanged(c("updated", [12, 77], [9001, userType]), 77), true);
  assert.equal(grantsMayHaveChanged(c("deleted", [77], [userType]), 77), true);
  // Another user's object: not the signed-in user's grants.
  assert.equal(grantsMayHaveChanged(c("updated", [78], [userType]), 77), false);
  assert.equal(grantsMayHaveChanged(c("created", [79], [userType]), 77), false);
  // Content, or a caller without a user object (id 0).
  assert.equal(grantsMayHaveChanged(c("updated", [12], [9001]), 77), false);
  assert.equal(grantsMayHaveChanged(c("updated", [0], [9001]), 0), false);
  assert.equal(grantsMayHaveChanged(c("updated", [78], [userType]), 0), false);
  // The account not read yet: any user object may be the own one.
  assert.equal(grantsMayHaveChanged(c("updated", [78], [userType]), null), true);
  assert.equal(grantsMayHaveChanged(c("updated", [12], [9001]), null), false);
  // A reset (changes missed): always.
  assert.equal(grantsMayHaveChanged(c("reset", [], []), 77), true);
  assert.equal(grantsMayHaveChanged(c("reset", [], []), null), true);
});

test("the probe is not a tracked write, and returning to the tab (focus and visibilitychange) asks once", async () => {
  const { api } = await import("../auth/session");
  const { branchAccess, recheckAccess } = await import("./access");
  const real = globalThis.fetch;
  let probes = 0;
  let answer: () => void = () => undefined;
  globalThis.fetch = (() => {
    probes++;
    return new Promise<Response>((resolve) => {
      answer = () => resolve(new Response(JSON.stringify({ status: 400, detail: "invalid request: no objects given" }), { status: 400 }));
    });
  }) as typeof fetch;
  let tracked = 0;
  const wasOnWrite = api.onWrite;
  api.onWrite = () => tracked++;
  try {
    const t0 = 1_000_000;
    const store = branchAccess("91", t0); // the first probe
    assert.equal(probes, 1);
    recheckAccess("91", t0 + 10, 2000); // focus: one on its way stands
    recheckAccess("91", t0 + 11, 2000); // visibilitychange
    answer();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(probes, 1);
    assert.deepEqual(store.get(), { kind: "write" });
    recheckAccess("91", t0 + 1500, 2000); // a probe of the last 2 s stands
    assert.equal(probes, 1);
    recheckAccess("91", t0 + 2500, 2000); // older: asked again
    assert.equal(probes, 2);
    answer();
    await new Promise((r) => setTimeout(r, 10));
    // A change of the grants asks at once, and once more after the probe on its way.
    recheckAccess("91", t0 + 2600);
    recheckAccess("91", t0 + 2601);
    assert.equal(probes, 3);
    answer();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(probes, 4);
    answer();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(tracked, 0, "the probe was reported as a write in flight");
  } finally {
    globalThis.fetch = real;
    api.onWrite = wasOnWrite;
  }
});
