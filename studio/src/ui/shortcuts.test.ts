/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { display, keyOf } from "./shortcuts";

test("keyOf names keys with mod for Ctrl, or ⌘ on a Mac", () => {
  const e = { key: "S", ctrlKey: true, metaKey: false, altKey: false };
  assert.equal(keyOf(e, false), "mod+s");
  assert.equal(keyOf(e, true), "s");
  assert.equal(keyOf({ key: "Escape", ctrlKey: false, metaKey: false, altKey: false }, false), "escape");
  assert.equal(keyOf({ key: "/", ctrlKey: false, metaKey: false, altKey: false }, false), "/");
});

test("display shows keys for people", () => {
  assert.equal(display("mod+s", false), "Ctrl+S");
  assert.equal(display("mod+s", true), "⌘S");
  assert.equal(display("g m", false), "G then M");
  assert.equal(display("escape", false), "Escape");
});
