/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { createBody, isBinary, isReference, move, moveActive, refId, searchBody, searchQuery } from "./reference-model";

test("reference data types", () => {
  assert.ok(isReference("ObjRef") && isReference("BinRef") && isReference("BinRef.Thumbnail"));
  assert.ok(!isReference("String") && !isReference("XmlRef.SimpleHtml"));
  assert.ok(isBinary("BinRef.Icon") && !isBinary("ObjRef"));
});

test("refId reads ids, nothing else", () => {
  assert.equal(refId(12), 12);
  assert.equal(refId("12"), 12);
  assert.equal(refId(0), undefined);
  assert.equal(refId(-3), undefined);
  assert.equal(refId(1.5), undefined);
  assert.equal(refId("x"), undefined);
  assert.equal(refId(undefined), undefined);
});

test("searchQuery makes prefix words of the typed text, capped", () => {
  assert.equal(searchQuery("Ber"), "ber*");
  assert.equal(searchQuery('  "Berlin" (Mitte) OR * '), "berlin* mitte* or*");
  assert.equal(searchQuery("  ?!* "), undefined);
  assert.equal(searchQuery("a b c d e f g h i j"), "a* b* c* d* e* f* g* h*");
  assert.equal(searchQuery("x".repeat(100)), "x".repeat(64) + "*");
});

test("searchBody filters on the target types and the words, or an id", () => {
  const b = searchBody("ber", [2001, 2002], 201);
  assert.deepEqual(b.filter, { deleted: false, uiLanguage: 201, objectTypeIds: [2001, 2002], fullText: "ber*" });
  assert.deepEqual(b.sortBy, [{ sortBy: 0 }, { sortBy: 3 }]);
  const recent = searchBody("", [], 202);
  assert.deepEqual(recent.filter, { deleted: false, uiLanguage: 202 });
  assert.deepEqual(recent.sortBy, [{ sortBy: 4, reverse: true }]);
  assert.deepEqual(searchBody("#42", [7], 201).filter?.objectIds, [42]);
  assert.equal(searchBody("#42", [7], 201).filter?.fullText, undefined);
});

test("moveActive walks the result list", () => {
  assert.equal(moveActive(-1, "ArrowDown", 3), 0);
  assert.equal(moveActive(0, "ArrowDown", 3), 1);
  assert.equal(moveActive(2, "ArrowDown", 3), 2);
  assert.equal(moveActive(1, "ArrowUp", 3), 0);
  assert.equal(moveActive(0, "ArrowUp", 3), 0);
  assert.equal(moveActive(1, "End", 3), 2);
  assert.equal(moveActive(2, "Home", 3), 0);
  assert.equal(moveActive(0, "PageDown", 30), 10);
  assert.equal(moveActive(0, "ArrowDown", 0), -1);
  assert.equal(moveActive(0, "a", 3), undefined);
});

test("move reorders a list", () => {
  assert.deepEqual(move([1, 2, 3], 0, 1), [2, 1, 3]);
  assert.deepEqual(move([1, 2, 3], 2, 0), [3, 1, 2]);
  assert.deepEqual(move([1, 2, 3], 2, 9), [1, 2, 3]);
  assert.deepEqual(move([1, 2, 3], 0, -1), [1, 2, 3]);
});

test("createBody names the new object in the editor's language", () => {
  assert.deepEqual(createBody(2001, "  Berlin ", 202).objects, [{ meta: { typeRef: 2001 }, values: [{ attribute: 1000, language: 202, variant: 0, value: "Berlin" }] }]);
});
