/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { contentTypes } from "./types";

test("content types: the system's types are left out on a child branch too (lastTransaction 0 there)", () => {
  const sys = (id: number, lastTransaction: number) => ({
    meta: { id, guid: `00000000-0000-0000-0000-${id.toString(16).padStart(12, "0")}`, lastTransaction },
    values: [{ attribute: 1000, language: 201, variant: 0, value: `type${id}` }],
  });
  const mine = (id: number, name: string, deleted = false) => ({
    meta: { id, guid: "ce56157f-87cb-4954-b44f-4b7392109d92", lastTransaction: 0, deleted },
    values: [{ attribute: 1000, language: 201, variant: 0, value: name }],
  });
  const got = contentTypes([sys(10, 1), sys(40, 0), mine(11008, "Product"), mine(11009, "Article"), mine(11010, "Gone", true)], [201]);
  assert.deepEqual(got.map((t) => t.name), ["Article", "Product"]);
});
