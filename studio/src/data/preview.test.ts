/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  chooseLanguage, chooseTemplate, deliveryPath, frameDocument, frameSandbox, maxPreviewBytes, renderParams, templatesOf,
} from "./preview";

test("templates are listed by name, deleted ones left out, a nameless one by id", () => {
  const got = templatesOf([
    { meta: { id: 12 }, displayName: "Teaser" },
    { meta: { id: 11, deleted: true }, displayName: "Gone" },
    { meta: { id: 10 }, displayName: "Article" },
    { meta: { id: 13 } },
  ]);
  assert.deepEqual(got, [{ id: 13, name: "#13" }, { id: 10, name: "Article" }, { id: 12, name: "Teaser" }]);
  assert.deepEqual(templatesOf(undefined), []);
});

test("the address's template when the branch has it, else the first", () => {
  const ts = [{ id: 10, name: "Article" }, { id: 12, name: "Teaser" }];
  assert.equal(chooseTemplate(ts, "12")?.id, 12);
  assert.equal(chooseTemplate(ts, "on")?.id, 10);
  assert.equal(chooseTemplate(ts, "99")?.id, 10);
  assert.equal(chooseTemplate([], "12"), undefined);
});

test("the preview language: the address's, else the first shown column's, else the first", () => {
  const ls = [{ id: 201 }, { id: 202 }];
  assert.equal(chooseLanguage(ls, "202", [201]), 202);
  assert.equal(chooseLanguage(ls, "999", [202, 201]), 202);
  assert.equal(chooseLanguage(ls, undefined, [0]), 201);
  assert.equal(chooseLanguage([], undefined, [201]), undefined);
});

test("the render renders one template over the object in one language", () => {
  assert.deepEqual(renderParams("7", 10, 2100017, 202), { branchId: "7", templateId: 10, objects: "2100017", languages: "202" });
  assert.deepEqual(renderParams("7", 10, 2100017, undefined), { branchId: "7", templateId: 10, objects: "2100017" });
});

test("the Delivery JSON's address", () => {
  assert.equal(deliveryPath("7", 2100017), "/delivery/api/branches/7/objects/2100017");
  assert.equal(deliveryPath("a/b", 1), "/delivery/api/branches/a%2Fb/objects/1");
});

test("the frame runs no script and has an opaque origin", () => {
  const tokens = frameSandbox.split(/\s+/);
  assert.ok(!tokens.includes("allow-scripts"));
  assert.ok(!tokens.includes("allow-same-origin"));
  const { doc, cut } = frameDocument("<h1>Hi</h1><script>alert(1)</script>");
  assert.equal(cut, false);
  assert.ok(doc.startsWith(`<meta http-equiv="Content-Security-Policy" content="script-src 'none'; object-src 'none'; base-uri 'none'">`));
  assert.ok(doc.endsWith("<h1>Hi</h1><script>alert(1)</script>"));
});

test("a page beyond the bound is cut at a character boundary", () => {
  const big = "ä".repeat(maxPreviewBytes); // two bytes each
  const { doc, cut } = frameDocument(big);
  assert.equal(cut, true);
  const body = doc.slice(doc.indexOf(">") + 1);
  assert.equal(new TextEncoder().encode(body).length, maxPreviewBytes);
  assert.ok(!body.includes("\uFFFD"));
});
