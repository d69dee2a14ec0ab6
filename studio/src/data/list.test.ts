/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  columnsOf, deliveryParams, expression, indexSort, optionsQuery, PageCache, pageSize, parseExpression, parseOptions,
  type Row,
} from "./list";

test("options round-trip through the address; unknown values fall back", () => {
  const o = parseOptions({ sort: "-price", q: "lamp", filter: "price>3", deleted: "deleted" });
  assert.deepEqual(o, { sort: { key: "price", desc: true }, q: "lamp", filter: "price>3", deleted: "deleted" });
  assert.deepEqual(optionsQuery(o), { sort: "-price", q: "lamp", filter: "price>3", deleted: "deleted" });
  const d = parseOptions({ deleted: "bogus" });
  assert.equal(d.deleted, "live");
  assert.deepEqual(optionsQuery(d), { sort: undefined, q: undefined, filter: undefined, deleted: undefined });
  assert.equal(parseOptions({ q: "x".repeat(900) }).q.length, 500);
});

test("the builder's expression: && joined, values quoted when not plain, incomplete rows left out", () => {
  assert.equal(
    expression([
      { field: "price", op: ">=", value: "10" },
      { field: "attributeName", op: "=", value: 'Alpha "lamp"' },
      { field: "", op: "=", value: "x" },
      { field: "price", op: "<", value: "" },
    ]),
    'price>=10&&attributeName="Alpha \\"lamp\\""',
  );
});

test("an expression the builder wrote reads back into its conditions", () => {
  const conds = [
    { field: "price", op: "!=" as const, value: "10" },
    { field: "attributeName", op: ":" as const, value: 'a && "b"' },
    { field: "meta.lastModified", op: ">" as const, value: "2024-01-01" },
  ];
  assert.deepEqual(parseExpression(expression(conds)), conds);
  assert.deepEqual(parseExpression(""), []);
  assert.equal(parseExpression("price>1||price<0"), null);
  assert.equal(parseExpression("(price>1)"), null);
  assert.equal(parseExpression('name="open'), null);
});

test("Delivery parameters: the deleted filter and the sort", () => {
  assert.deepEqual(deliveryParams(parseOptions({})), { deleted: false });
  assert.deepEqual(deliveryParams(parseOptions({ deleted: "all", sort: "displayName" })), { deleted: true, sort: "displayName asc" });
  assert.deepEqual(deliveryParams(parseOptions({ deleted: "deleted", filter: "price>1" })),
    { deleted: true, filter: "price>1&&meta.deleted=true" });
});

test("the Index sorts by name, id and last change, else not at all (null)", () => {
  assert.equal(indexSort(undefined), undefined);
  assert.deepEqual(indexSort({ key: "displayName", desc: true }), [{ sortBy: 3, reverse: true }]);
  assert.deepEqual(indexSort({ key: "meta.lastModified", desc: false }), [{ sortBy: 4, reverse: false }]);
  assert.equal(indexSort({ key: "price", desc: false }), null);
});

test("columns: scalar props but the name, sorted, capped", () => {
  const rows: Row[] = [
    { id: 1, name: "a", deleted: false, props: { attributeName: "a", price: 1, tags: ["x"] } },
    { id: 2, name: "b", deleted: false, props: { color: "red", weight: 2, active: true } },
  ];
  assert.deepEqual(columnsOf(rows), ["active", "color", "price"]);
});

test("the page cache reads each page once, shares a pending read, prefetches the next page", async () => {
  const reads: number[] = [];
  let changes = 0;
  const c = new PageCache(async (n) => {
    reads.push(n);
    return Array.from({ length: pageSize }, (_, i) => ({ id: n * pageSize + i, name: "", deleted: false, props: {} }));
  }, () => changes++);
  assert.equal(c.row(5), undefined);
  assert.equal(c.row(7), undefined);
  await c.load(0);
  assert.deepEqual(reads, [0]);
  assert.equal(c.row(5)?.id, 5);
  c.ensure(150, 180, 1000); // page 1 and the next one, 2
  await Promise.all([c.load(1), c.load(2)]);
  assert.deepEqual(reads, [0, 1, 2]);
  c.ensure(0, 10, 150); // page 1 is the last one: nothing more
  assert.deepEqual(reads, [0, 1, 2]);
  assert.ok(changes >= 3);
});

test("a failed page is read again and reported", async () => {
  let fail = true;
  const c = new PageCache(async () => {
    if (fail) throw new Error("boom");
    return [];
  }, () => undefined);
  await assert.rejects(c.load(0));
  assert.equal((c.error as Error).message, "boom");
  fail = false;
  await c.load(0);
  assert.equal(c.error, null);
});

test("refresh reads the held pages again and swaps them in place; a failed read keeps the rows", async () => {
  let version = 1;
  let changes = 0;
  const page = (n: number, v: number) => Array.from({ length: pageSize }, (_, i) => ({ id: n * pageSize + i, name: `v${v}`, deleted: false, props: {} }));
  const c = new PageCache(async (n) => page(n, version), () => changes++);
  await c.load(0);
  await c.load(2);
  const asked: number[] = [];
  version = 2;
  const refreshed = c.refresh(async (n) => {
    asked.push(n);
    if (n === 2) throw new Error("offline");
    return page(n, version);
  });
  assert.equal(c.row(0)?.name, "v1", "the old rows show while the new ones load");
  await refreshed;
  assert.deepEqual(asked.sort(), [0, 2]);
  assert.equal(c.row(0)?.name, "v2");
  assert.equal(c.row(200)?.name, "v1");
  assert.equal(c.has(1), false, "a page never read is not read by a refresh");
  assert.ok(changes >= 3);
});

test("a Delete or Restore refused with 403 turns the branch read-only as a refused save does; another error does not", async () => {
  const { branchAccess } = await import("./access");
  const { deleteObjects, restoreObjects } = await import("./list");
  const real = globalThis.fetch;
  let status = 403;
  globalThis.fetch = (async () => new Response(JSON.stringify({ status, detail: `user "rita" has no write permission on branch 77` }),
    { status, headers: { "Content-Type": "application/problem+json" } })) as typeof fetch;
  try {
    // now = 0: the store is read without a probe of its own.
    assert.deepEqual(branchAccess("77", 0).get(), { kind: "checking" });
    await assert.rejects(deleteObjects("77", [5]), /no write permission/);
    assert.deepEqual(branchAccess("77", 0).get(), { kind: "read", detail: `user "rita" has no write permission on branch 77`, revoked: true, by: "write" });
    await assert.rejects(restoreObjects("78", [5]), /no write permission/);
    assert.equal(branchAccess("78", 0).get().kind, "read");
    status = 500;
    await assert.rejects(deleteObjects("79", [5]));
    assert.deepEqual(branchAccess("79", 0).get(), { kind: "checking" });
  } finally {
    globalThis.fetch = real;
  }
});
