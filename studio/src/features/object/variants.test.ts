/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AttributeInfo } from "./fields/registry";
import { chosenVariant, hasVariant, undeclared, variantsOf } from "./variants";

const named = (id: number, en: string, extra: object = {}) => ({ meta: { id, ...extra }, values: [{ attribute: 1000, language: 201, variant: 0, value: en }] });
const attr = (id: number, variantAxis: number): AttributeInfo =>
  ({ id, name: `a${id}`, dataType: "String", languageDependent: false, multiple: false, required: false, targetTypes: [], variantAxis });

test("the variants of the axes, by axis and name, deleted ones left out", () => {
  const vs = variantsOf([50, 60], [named(50, "Season"), named(60, "Channel")],
    [[named(52, "Winter"), named(51, "Summer"), named(53, "Gone", { deleted: true })], [named(61, "Print")]], [201]);
  assert.deepEqual(vs, [
    { id: 51, name: "Summer", axis: 50, axisName: "Season" },
    { id: 52, name: "Winter", axis: 50, axisName: "Season" },
    { id: 61, name: "Print", axis: 60, axisName: "Channel" },
  ]);
  assert.equal(chosenVariant(vs, "52")?.name, "Winter");
  assert.equal(chosenVariant(vs, "9"), undefined);
  assert.equal(chosenVariant(vs, undefined), undefined);
  assert.equal(chosenVariant(vs, "x"), undefined);
});

test("an attribute has the variants of its own axis only", () => {
  const summer = { id: 51, name: "Summer", axis: 50, axisName: "Season" };
  assert.ok(hasVariant(attr(1, 50), summer));
  assert.ok(!hasVariant(attr(2, 60), summer));
  assert.ok(!hasVariant(attr(3, 0), summer));
  assert.ok(!hasVariant(attr(1, 50), undefined));
});

test("stored variants no axis declares are listed by id", () => {
  const o = { values: [{ attribute: 1, language: 0, variant: 51, value: "x" }, { attribute: 1, language: 0, variant: 77, value: "y" }, { attribute: 2, language: 0, variant: 0, value: "z" }] };
  assert.deepEqual(undeclared([{ id: 51, name: "Summer", axis: 50, axisName: "Season" }], o, [attr(1, 50)]), [{ id: 77, name: "#77", axis: 50, axisName: "" }]);
});
