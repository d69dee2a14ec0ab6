/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { A, attributeRows, fieldOf, formAttributes, nameIn, nameRows, parseAttribute, parseType, type AttributeDraft } from "./model";
import { isSystem } from "./types";

const v = (attribute: number, value: unknown, language = 0, sortReverse = 0) => ({ attribute, language, variant: 0, value, sortReverse });

test("parseType reads names, display-name attribute and forms; system by the bootstrap GUID", () => {
  const t = parseType({
    meta: { id: 11007, guid: "6f1c2a3e-0000-4000-8000-000000000001", apiIdentifier: "product", typeRef: 0 },
    values: [v(A.name, "Product", 201), v(A.name, "Produkt", 202), v(A.displayName, 11008), v(A.detailForms, 11020, 0, 1), v(A.detailForms, 11019, 0, 0)],
  });
  assert.deepEqual(t.names, { 201: "Product", 202: "Produkt" });
  assert.equal(t.displayNameAttr, 11008);
  assert.deepEqual(t.detailForms, [11019, 11020]);
  assert.equal(t.system, false);
  // A system type renamed by an administrator (lastTransaction moved) or read on a child branch (0) is still one.
  assert.equal(isSystem({ meta: { id: 40, guid: "00000000-0000-0000-0000-000000000028", lastTransaction: 7 } }), true);
  assert.equal(isSystem({ meta: { id: 40, guid: "00000000-0000-0000-0000-000000000028", lastTransaction: 0 } }), true);
  assert.equal(isSystem({ meta: { id: 11007, guid: "6f1c2a3e-0000-4000-8000-000000000001", lastTransaction: 1 } }), false);
});

test("parseAttribute reads every setting", () => {
  const a = parseAttribute({
    meta: { id: 11010, apiIdentifier: "related", typeRef: 10 },
    values: [v(A.dataType, "ObjRef"), v(A.multi, true), v(A.maxValues, 5), v(A.refTypes, 11007), v(A.refTypes, 11009, 0, 1), v(A.required, true), v(A.name, "Related", 201)],
  });
  assert.deepEqual(
    { dt: a.dataType, multi: a.multi, max: a.maxValues, refs: a.refTypes, req: a.required, lang: a.langDep },
    { dt: "ObjRef", multi: true, max: 5, refs: [11007, 11009], req: true, lang: false },
  );
});

test("formAttributes unions the forms' 5053 lists in order, skipping other objects", () => {
  const f = (id: number, ids: number[], typeRef = 50) => ({ meta: { id, typeRef }, values: ids.map((x, i) => v(A.formContent, x, 0, i)) });
  assert.deepEqual(formAttributes([f(1, [5, 6]), f(2, [6, 7]), f(3, [9], 10)]), [5, 6, 7]);
});

test("nameRows sends changed names and removes cleared ones", () => {
  assert.deepEqual(nameRows({ 201: "Title", 202: "" }, undefined), [v(A.name, "Title", 201)]);
  assert.deepEqual(nameRows({ 201: "Headline", 202: "" }, { 201: "Title", 202: "Titel" }), [v(A.name, "Headline", 201), v(A.name, null, 202)]);
  assert.deepEqual(nameRows({ 201: "Title" }, { 201: "Title" }), []);
});

const draft = (d: Partial<AttributeDraft>): AttributeDraft => ({
  apiIdentifier: "x", names: { 201: "X" }, dataType: "String", multi: false, maxValues: 0, refTypes: [], langDep: false, required: false, ...d,
});

test("attributeRows on create sends the data type and the settings that are set", () => {
  assert.deepEqual(attributeRows(draft({ langDep: true })), [v(A.name, "X", 201), v(A.dataType, "String"), v(A.langDep, true)]);
  assert.deepEqual(attributeRows(draft({ dataType: "ObjRef", multi: true, maxValues: 5, refTypes: [11007] })), [
    v(A.name, "X", 201), v(A.dataType, "ObjRef"), v(A.multi, true), v(A.maxValues, 5), v(A.refTypes, 11007),
  ]);
  // Target types belong to references only.
  assert.deepEqual(attributeRows(draft({ refTypes: [11007] })), [v(A.name, "X", 201), v(A.dataType, "String")]);
});

test("attributeRows on update sends only what changed, never the data type", () => {
  const before = parseAttribute({ meta: { id: 9 }, values: [v(A.dataType, "ObjRef"), v(A.multi, true), v(A.maxValues, 5), v(A.refTypes, 11007), v(A.name, "Rel", 201)] });
  assert.deepEqual(attributeRows(draft({ dataType: "String", names: { 201: "Rel" }, multi: true, maxValues: 5, refTypes: [11007] }), before), []);
  assert.deepEqual(attributeRows(draft({ names: { 201: "Rel" }, multi: false, maxValues: 5, refTypes: [] }), before), [
    v(A.multi, false), v(A.maxValues, null), v(A.refTypes, null),
  ]);
});

test("fieldOf maps the API's messages to the field they concern", () => {
  assert.equal(fieldOf(`invalid request: ApiIdentifier "1bad": character '1' not allowed at 0`), "apiIdentifier");
  assert.equal(fieldOf(`invalid request: apiIdentifier "title" is already used by object 40`), "apiIdentifier");
  assert.equal(fieldOf(`forbidden: the apiIdentifier of object 40 is "typeBranch" and cannot change`), "apiIdentifier");
  assert.equal(fieldOf(`invalid request: attribute 1001 (String.DataType): value "Strin" is not a data type name`), "dataType");
  assert.equal(fieldOf(`invalid request: attribute 1015: object 1000 has type 10, allowed are [0]`), "refTypes");
  assert.equal(fieldOf(`invalid request: attribute 1021: set meta.apiIdentifier instead`), "apiIdentifier");
  assert.equal(fieldOf(`invalid request: attribute 1000 is language dependent: language 0 given`), "names");
  assert.equal(fieldOf("precondition failed"), null);
  assert.equal(fieldOf(undefined), null);
});

test("nameIn prefers the asked languages", () => {
  assert.equal(nameIn({ 201: "Product", 202: "Produkt" }, [202, 201], "#1"), "Produkt");
  assert.equal(nameIn({ 202: "Produkt" }, [201], "#1"), "Produkt");
  assert.equal(nameIn({}, [201], "#1"), "#1");
});
