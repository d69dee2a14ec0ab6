/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { attributeRefs, type FilterAttribute, indexCondition, IndexFilterError } from "./indexfilter";
import { fetchCount, fetchPage, parseExpression, parseOptions, type Source } from "./list";

const attrs = new Map<string, FilterAttribute>([
  ["listprice", { id: 5001, languageDependent: false }],
  ["teaser", { id: 5002, languageDependent: true }],
  ["1000", { id: 1000, languageDependent: true }],
]);
const base = { fullText: "lamp", typeId: 7, deleted: false, language: 202 };

test("the conditions the filter names: ApiIdentifiers once, displayName as the display-name attribute, no meta fields", () => {
  const conds = parseExpression("listPrice>=10&&listprice<20&&displayName=x&&meta.id=3&&teaser:word") ?? [];
  assert.deepEqual(attributeRefs(conds, 1000), ["listPrice", "1000", "teaser"]);
  assert.deepEqual(attributeRefs(conds, 5009), ["listPrice", "5009", "teaser"]);
});

test("search and conditions in one Index condition: ids, the chosen language for language-dependent values", () => {
  const conds = parseExpression('listPrice>=9990&&teaser!="Sale"&&displayName=Lamp&&meta.id=42&&meta.lastModified>=2026-01-01') ?? [];
  assert.deepEqual(indexCondition(base, conds, attrs, 1000), {
    objectTypeIds: [7], fullText: "lamp", uiLanguage: 202, deleted: false,
    objectIds: [42], modifiedSince: "2026-01-01",
    filters: [
      { attrId: 5001, langId: 0, variantId: 0, compareOperator: 5, value: "9990" },
      { attrId: 5002, langId: 202, variantId: 0, compareOperator: 1, value: "Sale" },
      { attrId: 1000, langId: 202, variantId: 0, compareOperator: 0, value: "Lamp" },
    ],
  });
  assert.deepEqual(indexCondition({ ...base, language: 201, deleted: undefined }, parseExpression("teaser<b") ?? [], attrs, 1000),
    { objectTypeIds: [7], fullText: "lamp", uiLanguage: 201, filters: [{ attrId: 5002, langId: 201, variantId: 0, compareOperator: 2, value: "b" }] });
  assert.deepEqual(indexCondition(base, [], attrs, 1000), { objectTypeIds: [7], fullText: "lamp", uiLanguage: 202, deleted: false });
});

test("what the Index cannot take is said, naming the condition", () => {
  const refused = (expr: string, reason: string, field: string) =>
    assert.throws(() => indexCondition(base, parseExpression(expr) ?? [], attrs, 1000),
      (e: unknown) => e instanceof IndexFilterError && e.reason === reason && e.field === field, expr);
  refused("teaser:word", "contains", "teaser");
  refused("meta.guid=abc", "meta", "meta.guid");
  refused("meta.lastModified<2026-01-01", "meta", "meta.lastModified");
  refused("noSuch=1", "unknown", "noSuch");
});

test("a search with filter rows is one Index search and its count, with the same condition; the attributes are read once", async () => {
  const calls: { method: string; url: URL; body: unknown }[] = [];
  const saved = globalThis.fetch;
  globalThis.fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    const u = new URL(String(url), "http://x");
    calls.push({ method: init?.method ?? "GET", url: u, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    const answer = u.pathname.endsWith("/objects") && u.pathname.startsWith("/apis/cms/")
      ? { objects: [{ meta: { id: 5001, typeRef: 10, apiIdentifier: "listPrice" }, values: [{ attribute: 1017, value: false }] },
        { meta: { id: 5002, typeRef: 10, apiIdentifier: "teaser" }, values: [{ attribute: 1017, value: true }] }] }
      : u.pathname.endsWith("/objectCount") ? { count: 10 }
      : { objects: [{ id: 9, displayName: "Item 09990" }] };
    return new Response(JSON.stringify(answer), { status: 200, headers: { "Content-Type": "application/json" } });
  }) as typeof fetch;
  const src: Source = {
    branch: "4", type: "listProduct", typeId: 7, language: 202, nameAttr: 1000,
    options: parseOptions({ q: "item", filter: "listPrice>=9990&&teaser=Sale" }),
  };
  try {
    const [rows, count] = await Promise.all([fetchPage(src, 0), fetchCount(src)]);
    assert.equal(rows[0]?.name, "Item 09990");
    assert.equal(count, 10);
    await fetchPage({ ...src, minVersion: 12 }, 1); // a live refresh of the same list
  } finally {
    globalThis.fetch = saved;
  }
  const mgmt = calls.filter((c) => c.url.pathname.startsWith("/apis/cms/"));
  assert.equal(mgmt.length, 1, "the filter's attributes are one Management request");
  assert.equal(mgmt[0]?.url.searchParams.get("ids"), "listPrice,teaser");
  assert.equal(mgmt[0]?.url.searchParams.get("attributes"), "1017");
  assert.equal(calls.filter((c) => c.url.pathname.startsWith("/delivery/")).length, 0, "no Delivery request");
  const search = calls.filter((c) => c.url.pathname === "/apis/index/v1/branches/4/objects");
  const counted = calls.filter((c) => c.url.pathname === "/apis/index/v1/branches/4/objectCount");
  assert.equal(search.length, 2);
  assert.equal(counted.length, 1);
  const want = {
    objectTypeIds: [7], fullText: "item", uiLanguage: 202, deleted: false,
    filters: [
      { attrId: 5001, langId: 0, variantId: 0, compareOperator: 5, value: "9990" },
      { attrId: 5002, langId: 202, variantId: 0, compareOperator: 0, value: "Sale" },
    ],
  };
  assert.deepEqual((search[0]?.body as { filter: unknown }).filter, want);
  assert.deepEqual((counted[0]?.body as { filter: unknown }).filter, want, "the count carries the same condition");
  assert.deepEqual(search[0]?.body, { filter: want, page: { skip: 0, take: 100 } });
});

test("an unknown attribute (Management's 404) is said at the builder, naming it", async () => {
  const saved = globalThis.fetch;
  globalThis.fetch = (async () => new Response(JSON.stringify({ status: 404, title: "Not Found", detail: 'object "noSuch" on branch 4' }),
    { status: 404, headers: { "Content-Type": "application/problem+json" } })) as typeof fetch;
  try {
    await assert.rejects(fetchCount({ branch: "4", type: "t", typeId: 7, language: 201, nameAttr: 1000, options: parseOptions({ q: "x", filter: "listPrice>1&&noSuch=2" }) }),
      (e: unknown) => e instanceof IndexFilterError && e.reason === "unknown" && e.field === "noSuch");
  } finally {
    globalThis.fetch = saved;
  }
});
