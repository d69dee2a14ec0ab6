/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { objectReadOnlyText } from "./ReadOnlyNotice";

test("the object's read-only wording: a reader, a save refused, a grant found removed; unsaved changes said kept", () => {
  assert.equal(objectReadOnlyText({ kind: "read", revoked: false }, "Work", false),
    "Read only: you may read branch Work but not change it (you have no write permission there). Ask an administrator for a write grant to edit.");
  assert.match(objectReadOnlyText({ kind: "read", revoked: true, by: "save" }, "Work", false), /^Your write permission on branch Work was removed while you were editing: the save was refused\./);
  for (const by of ["check", "write"] as const) {
    assert.match(objectReadOnlyText({ kind: "read", revoked: true, by }, "Work", false), /^Your write permission on branch Work was removed while this object was open: it is read only now/);
  }
  const dirty = objectReadOnlyText({ kind: "read", revoked: true, by: "check" }, "Work", true);
  assert.ok(dirty.endsWith(" Your unsaved changes are kept in this browser."), dirty);
  assert.ok(!objectReadOnlyText({ kind: "read", revoked: false }, "Work", false).includes("unsaved"));
});
