/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { conflictFields, fieldMessage, loadDraft, patchRows, problemField, resolveConflict, rowsByKey, saveDraft, keyOf, valueOf, type KeyValueStorage } from "./object";

const memory = (): KeyValueStorage & { m: Map<string, string> } => {
  const m = new Map<string, string>();
  return { m, getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v), removeItem: (k) => void m.delete(k) };
};

test("rowsByKey groups by attribute, language and variant in sortReverse order", () => {
  const r = rowsByKey({ values: [{ attribute: 5, language: 0, variant: 0, value: "b", sortReverse: 1 }, { attribute: 5, value: "a", sortReverse: 0 }, { attribute: 6, language: 201, value: 3 }] });
  assert.deepEqual(valueOf(r, keyOf(5, 0, 0), true), ["a", "b"]);
  assert.equal(valueOf(r, keyOf(6, 201, 0), false), 3);
  assert.equal(valueOf(r, keyOf(6, 202, 0), false), undefined);
});

test("patchRows: set, clear, multiple values, back to inherited", () => {
  const rows = patchRows(
    { [keyOf(5, 201, 0)]: { kind: "set", value: "Hi" }, [keyOf(6, 0, 0)]: { kind: "set", value: "" }, [keyOf(7, 0, 0)]: { kind: "set", value: ["x", "y"] }, [keyOf(8, 202, 0)]: { kind: "inherit" } },
    (a) => a === 7,
  );
  assert.deepEqual(rows, [
    { attribute: 5, language: 201, variant: 0, value: "Hi" },
    { attribute: 6, language: 0, variant: 0, value: null },
    { attribute: 7, language: 0, variant: 0, value: "x", sortReverse: 0 },
    { attribute: 7, language: 0, variant: 0, value: "y", sortReverse: 1 },
    { attribute: 8, language: 202, variant: 0, value: null, inherit: true },
  ]);
});

test("drafts are kept per branch and object; an empty one is removed; junk reads as none", () => {
  const s = memory();
  const d = { savedAt: "2026-01-02T03:04:05Z", etag: '"e1"', edits: { [keyOf(5, 0, 0)]: { kind: "set" as const, value: 1 } } };
  assert.equal(saveDraft(s, "9", "100", d), true);
  assert.deepEqual(loadDraft(s, "9", "100"), d);
  assert.equal(loadDraft(s, "4", "100"), null);
  saveDraft(s, "9", "100", { ...d, edits: {} });
  assert.equal(s.m.size, 0);
  s.setItem("cms.studio.draft.9.100", "{not json");
  assert.equal(loadDraft(s, "9", "100"), null);
  const big = { ...d, edits: { [keyOf(5, 0, 0)]: { kind: "set" as const, value: "x".repeat(1 << 20) } } };
  assert.equal(saveDraft(s, "9", "101", big), false);
});

test("conflictFields shows yours against theirs and whether they changed it; resolve keeps the chosen", () => {
  const k1 = keyOf(5, 201, 0), k2 = keyOf(6, 201, 0);
  const edits = { [k1]: { kind: "set" as const, value: "mine" }, [k2]: { kind: "set" as const, value: "also mine" } };
  const base = { values: [{ attribute: 5, language: 201, value: "old" }, { attribute: 6, language: 201, value: "same" }] };
  const now = { values: [{ attribute: 5, language: 201, value: "theirs" }, { attribute: 6, language: 201, value: "same" }] };
  const fs = conflictFields(edits, base, now, () => false);
  assert.deepEqual(fs.map((f) => [f.key, f.base, f.theirs, f.changed]), [[k1, "old", "theirs", true], [k2, "same", "same", false]]);
  assert.deepEqual(resolveConflict(edits, { [k1]: "theirs" }), { [k2]: edits[k2] });
});

test("problemField reads the members, else the detail", () => {
  assert.deepEqual(problemField({ attribute: 5001, language: 202 }), { attr: 5001, lang: 202, variant: undefined });
  assert.deepEqual(problemField({ detail: "attribute 5003 (Integer): the value must lie within -9007199254740991..9007199254740991" }), { attr: 5003, lang: undefined });
  assert.deepEqual(problemField({ detail: "attribute 5001 is language independent: language 202 given" }), { attr: 5001, lang: 202 });
  assert.equal(problemField({ detail: "no objects given" }), null);
  assert.equal(problemField(undefined), null);
});

test("fieldMessage drops what the field already says", () => {
  assert.equal(fieldMessage("invalid request: attribute 11017 (Integer): the value must lie within -1..1"), "The value must lie within -1..1");
  assert.equal(fieldMessage("invalid request: attribute 5 is language independent: language 202 given"), "Attribute 5 is language independent: language 202 given");
  assert.equal(fieldMessage("something else"), "Something else");
});
