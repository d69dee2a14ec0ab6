/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { initials } from "./avatar";

test("initials: first and last word, one letter for one word, ? for none", () => {
  assert.equal(initials("Carla Berger"), "CB");
  assert.equal(initials("  maria von der Keller "), "MK");
  assert.equal(initials("admin"), "A");
  assert.equal(initials("jonas.weber"), "JW");
  assert.equal(initials("Ölaf Ünger"), "ÖÜ");
  assert.equal(initials(""), "?");
});
