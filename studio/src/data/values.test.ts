/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { displayName, values } from "./values";

const o = {
  meta: { id: 7 },
  values: [
    { attribute: 1000, language: 202, variant: 0, value: "Startseite" },
    { attribute: 1000, language: 201, variant: 0, value: "Home" },
    { attribute: 5, language: 0, variant: 1, value: "x" },
  ],
};

test("displayName prefers the asked language, then any", () => {
  assert.equal(displayName(o, [202]), "Startseite");
  assert.equal(displayName(o, [201]), "Home");
  assert.equal(displayName(o, [999]), "Startseite");
  assert.equal(displayName({ meta: { id: 3 } }), "#3");
});

test("values filter by attribute, language and variant", () => {
  assert.equal(values(o, 1000).length, 2);
  assert.equal(values(o, 5, 0).length, 0);
  assert.equal(values(o, 5, 0, 1).length, 1);
});
