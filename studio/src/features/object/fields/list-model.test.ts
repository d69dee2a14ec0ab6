/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { addRow, listOf, moveKey, removeRow, rowOfProblem, rowOfSent, RowKeys } from "./list-model";

test("a stored value as rows", () => {
  assert.deepEqual(listOf(["a", "b"]), ["a", "b"]);
  assert.deepEqual(listOf("a"), ["a"]);
  assert.deepEqual(listOf(undefined), []);
  assert.deepEqual(listOf(null), []);
  assert.deepEqual(addRow(["a"]), ["a", null]);
  assert.deepEqual(removeRow(["a", "b", "c"], 1), ["a", "c"]);
});

test("Alt+arrow keys move a row, nothing else does", () => {
  assert.equal(moveKey({ key: "ArrowUp", altKey: true }), -1);
  assert.equal(moveKey({ key: "ArrowDown", altKey: true }), 1);
  assert.equal(moveKey({ key: "ArrowDown", altKey: false }), 0);
  assert.equal(moveKey({ key: "ArrowDown", altKey: true, ctrlKey: true }), 0);
  assert.equal(moveKey({ key: "a", altKey: true }), 0);
});

test("row keys follow their rows through add, move and remove", () => {
  const k = new RowKeys();
  const [a, b, c] = k.of(3);
  k.move(0, 2);
  assert.deepEqual(k.of(3), [b, c, a]);
  k.remove(1);
  assert.deepEqual(k.of(2), [b, a]);
  k.add();
  const now = k.of(3);
  assert.deepEqual(now.slice(0, 2), [b, a]);
  assert.ok(![a, b, c].includes(now[2]!));
  // A list changed from outside (another length) gets new keys.
  assert.equal(k.of(1).length, 1);
});

test("the row an API error is about", () => {
  // Empty rows are not sent: sortReverse counts the rows that are.
  assert.equal(rowOfSent(["a", null, "b"], 1), 2);
  assert.equal(rowOfSent(["a"], 3), undefined);
  assert.equal(rowOfProblem({ detail: "x", attribute: 7, sortReverse: 1 }, ["a", "", "b"]), 2);
  // Without the member: the one row whose value the detail quotes.
  assert.equal(rowOfProblem({ detail: 'invalid request: attribute 7 (String): value 12 is not a string' }, ["x", 12]), 1);
  assert.equal(rowOfProblem({ detail: "invalid request: attribute 7: referenced object 99 does not exist on branch 4" }, [5, 99, 6]), 1);
  assert.equal(rowOfProblem({ detail: "invalid request: attribute 7: object 6 has type 3, allowed are [2]" }, [5, 99, 6]), 2);
  // Named twice, or not at all: the whole list.
  assert.equal(rowOfProblem({ detail: "invalid request: attribute 7: referenced object 5 does not exist on branch 4" }, [5, 5]), undefined);
  assert.equal(rowOfProblem({ detail: "invalid request: attribute 7 (Integer): the value must lie within" }, [1, 2]), undefined);
  assert.equal(rowOfProblem(undefined, [1]), undefined);
});
