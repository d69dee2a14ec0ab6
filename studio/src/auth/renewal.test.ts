/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { adoptRenewal, replacedToken } from "./renewal";

const t0 = { user: "editor", token: "cms2.a", expiresAt: "2026-12-02T10:00:00Z" };
const t1 = { user: "editor", token: "cms2.b", expiresAt: "2026-12-02T10:15:00Z" };

test("a tab holding the renewed token adopts the successor", () => {
  assert.deepEqual(adoptRenewal(t0, { from: "cms2.a", to: t1 }), t1);
});

test("other tabs keep their own session", () => {
  assert.equal(adoptRenewal(t1, { from: "cms2.a", to: t1 }), null, "already moved on");
  assert.equal(adoptRenewal({ ...t0, token: "cms2.other" }, { from: "cms2.a", to: t1 }), null, "another session");
  assert.equal(adoptRenewal(null, { from: "cms2.a", to: t1 }), null, "signed out");
  assert.equal(adoptRenewal(t0, { from: "cms2.a", to: { ...t1, user: "admin" } }), null, "another user");
  for (const junk of [null, 7, "x", {}, { from: "cms2.a" }, { from: "cms2.a", to: { token: "" } }, { from: "cms2.a", to: { ...t1, expiresAt: 5 } }]) {
    assert.equal(adoptRenewal(t0, junk), null, JSON.stringify(junk));
  }
});

test("a 401 for a token the tab has replaced meanwhile does not sign out", () => {
  assert.equal(replacedToken("cms2.a", t1), true);
  assert.equal(replacedToken("cms2.b", t1), false);
  assert.equal(replacedToken(null, t1), false);
  assert.equal(replacedToken("cms2.a", null), false);
});
