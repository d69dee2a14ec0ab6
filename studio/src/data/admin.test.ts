/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { adminOf } from "./admin";

const user = (login: string, admin?: boolean) => ({
  values: [{ attribute: 1100, value: login }, ...(admin === undefined ? [] : [{ attribute: 1102, value: admin }])],
});

test("the own user object's admin flag decides", () => {
  assert.equal(adminOf("admin", [user("admin", true)]), "yes");
  assert.equal(adminOf("jonas", [user("jonas", false)]), "no");
  assert.equal(adminOf("jonas", [user("jonas")]), "no");
  assert.equal(adminOf("jonas", []), "no");
});

test("another user's object in the answer means the caller reads every user: an administrator", () => {
  assert.equal(adminOf("root", [user("admin", true), user("jonas", false)]), "yes");
  assert.equal(adminOf("root", [user("root"), user("jonas")]), "yes");
});

test("an object without a login name counts for nothing", () => {
  assert.equal(adminOf("jonas", [{ values: [{ attribute: 1102, value: true }] }, user("jonas", false)]), "no");
});
