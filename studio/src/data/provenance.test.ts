/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { chainOf, provenance } from "./provenance";

const row = (attribute: number, language: number, value: unknown, variant = 0) => ({ attribute, language, variant, value });
// Branch 9 (child) → 4 (root).
const chain = [
  { branch: 9, object: { meta: { id: 100 }, values: [row(5000, 201, "Hello child")] } },
  { branch: 4, object: { meta: { id: 100 }, values: [row(5000, 201, "Hello"), row(5001, 201, "Teaser"), row(5002, 0, 7)] } },
];
const fallbacks = new Map([[202, 201], [201, 0]]);

test("a local row is set here, an ancestor's is inherited from that branch", () => {
  const p = provenance(chain, fallbacks);
  assert.deepEqual(p.source(5000, 201, 0, true), { kind: "local" });
  assert.deepEqual(p.source(5001, 201, 0, true), { kind: "inherited", branch: 4 });
  assert.deepEqual(p.source(5002, 0, 0, false), { kind: "inherited", branch: 4 });
  assert.deepEqual(p.source(5003, 0, 0, false), { kind: "none" });
});

test("a language-dependent value missing in de falls back to en, with en's own source", () => {
  const p = provenance(chain, fallbacks);
  assert.deepEqual(p.source(5001, 202, 0, true), { kind: "fallback", language: 201, from: { kind: "inherited", branch: 4 } });
  assert.deepEqual(p.source(5000, 202, 0, true), { kind: "fallback", language: 201, from: { kind: "local" } });
  // Language independent: no fallback.
  assert.deepEqual(p.source(5001, 202, 0, false), { kind: "none" });
  // A nearer row in de wins over the fallback.
  const q = provenance([{ branch: 9, object: { values: [row(5001, 202, "Anriss")] } }, ...chain.slice(1)], fallbacks);
  assert.deepEqual(q.source(5001, 202, 0, true), { kind: "local" });
});

test("variants are separate values; an object missing on a branch counts as no rows", () => {
  const p = provenance([{ branch: 9, object: null }, { branch: 4, object: { values: [row(5000, 201, "v", 3)] } }], fallbacks);
  assert.deepEqual(p.source(5000, 201, 3, true), { kind: "inherited", branch: 4 });
  assert.deepEqual(p.source(5000, 201, 0, true), { kind: "none" });
});

test("a fallback cycle ends", () => {
  const p = provenance(chain, new Map([[202, 203], [203, 202]]));
  assert.deepEqual(p.source(5001, 202, 0, true), { kind: "none" });
});

test("chainOf follows the parents and cuts cycles", () => {
  const parents = new Map<number, number | undefined>([[4, undefined], [9, 4], [12, 9], [20, 21], [21, 20]]);
  assert.deepEqual(chainOf(12, parents), [12, 9, 4]);
  assert.deepEqual(chainOf(4, parents), [4]);
  assert.deepEqual(chainOf(20, parents), [20, 21]);
});

test("a variant's value missing in the variant falls back to the value without variant (variants outer, languages inner)", () => {
  const summer = 3000;
  const c = [
    { branch: 9, object: { values: [row(5000, 201, "Summer child", summer)] } },
    { branch: 4, object: { values: [row(5000, 201, "Hello"), row(5001, 201, "Teaser"), row(5001, 201, "Summer teaser", summer), row(5002, 0, 7)] } },
  ];
  const p = provenance(c, fallbacks);
  assert.deepEqual(p.source(5000, 201, summer, true), { kind: "local" });
  assert.deepEqual(p.source(5001, 201, summer, true), { kind: "inherited", branch: 4 });
  // de: the variant in en (its language fallback) comes before the value without variant in de.
  assert.deepEqual(p.source(5001, 202, summer, true), { kind: "fallback", language: 201, from: { kind: "inherited", branch: 4 } });
  // Not in the variant at all: the value without variant, with its own source.
  assert.deepEqual(p.source(5002, 0, summer, false), { kind: "base", from: { kind: "inherited", branch: 4 } });
  assert.deepEqual(p.source(5000, 201, 3001, true), { kind: "base", from: { kind: "inherited", branch: 4 } });
  assert.deepEqual(p.source(5009, 0, summer, false), { kind: "none" });
  // Without a variant nothing changes.
  assert.deepEqual(p.source(5002, 0, 0, false), { kind: "inherited", branch: 4 });
});
