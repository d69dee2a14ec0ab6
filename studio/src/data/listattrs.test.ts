/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CmsObject } from "../api/generated/management";
import { columnLabels, labelsOf, nameOf } from "./listattrs";

const price: CmsObject = {
  meta: { id: 5001, apiIdentifier: "listPrice" },
  values: [{ attribute: 1000, language: 201, value: "Price" }, { attribute: 1000, language: 202, value: "Preis" }],
};
const weight: CmsObject = { meta: { id: 5002, apiIdentifier: "weight" }, values: [{ attribute: 1000, language: 201, value: "Weight" }] };
const bare: CmsObject = { meta: { id: 5003, apiIdentifier: "sku" }, values: [] };

test("an attribute's name in the chosen language, else the fallback, else none", () => {
  assert.equal(nameOf(price, [202, 201]), "Preis");
  assert.equal(nameOf(price, [201, 202]), "Price");
  assert.equal(nameOf(weight, [202, 201]), "Weight", "German falls back to English");
  assert.equal(nameOf({ values: [{ attribute: 1000, language: 0, value: "Neutral" }] }, [202, 201]), "Neutral");
  assert.equal(nameOf({ values: [{ attribute: 1000, language: 203, value: "Prix" }] }, [202, 201]), "Prix");
  assert.equal(nameOf(bare, [201]), undefined);
});

test("labels by ApiIdentifier (ignoring case); without an object or a name the ApiIdentifier stays", () => {
  assert.deepEqual(labelsOf(["listprice", "weight", "sku", "gone"], [price, weight, bare], [202, 201]),
    { listprice: "Preis", weight: "Weight", sku: "sku", gone: "gone" });
});

test("the column labels are one GetObjects request: the ids, inherited values, only attribute 1000", async () => {
  const asked: string[] = [];
  const saved = globalThis.fetch;
  globalThis.fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    asked.push(`${init?.method ?? "GET"} ${String(url)}`);
    return new Response(JSON.stringify({ objects: [price, weight] }), { status: 200, headers: { "Content-Type": "application/json" } });
  }) as typeof fetch;
  try {
    assert.deepEqual(await columnLabels("4", ["listPrice", "weight"], [202, 201]), { listPrice: "Preis", weight: "Weight" });
    assert.deepEqual(await columnLabels("4", [], [201]), {}, "no columns, no request");
  } finally {
    globalThis.fetch = saved;
  }
  assert.equal(asked.length, 1);
  const u = new URL(asked[0]!.slice(4), "http://x");
  assert.equal(asked[0]!.slice(0, 4), "GET ");
  assert.equal(u.pathname, "/apis/cms/v1/branches/4/objects");
  assert.equal(u.searchParams.get("ids"), "listPrice,weight");
  assert.equal(u.searchParams.get("inherited"), "true");
  assert.equal(u.searchParams.get("attributes"), "1000");
});
