/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { editable, schema } from "./richtext-schema";
import { sanitize, type HNode } from "./xhtml";

const el = (t: string, c: HNode[] = [], a: [string, string][] = []): HNode => ({ t, a, c });

test("editable: what the editor shows in full, and what it would drop", () => {
  assert.ok(editable([el("p", ["a ", el("strong", ["b"]), el("a", ["l"], [["href", "/x"], ["rel", "nofollow"]])]), el("ul", [el("li", [el("p", ["x"])])])]));
  assert.ok(!editable([el("table", [el("tbody", [el("tr", [el("td", ["x"])])])])]));
  assert.ok(!editable([el("p", ["x"], [["title", "t"]])]));
  assert.ok(!editable(sanitize([el("p", [el("img", [], [["src", "/a.png"]])])])));
});

test("every element the schema writes is one the sanitizer keeps", () => {
  // The schema's output tags (toDOM) against the sanitizer: each kept as is.
  const written = ["p", "h2", "h3", "h4", "blockquote", "ul", "ol", "li", "br", "strong", "em", "code"];
  for (const t of written) assert.deepEqual(sanitize([el(t, ["x"])]), [el(t, ["x"])], t);
  assert.deepEqual(sanitize([el("a", ["x"], [["href", "https://e.example/"]])]), [el("a", ["x"], [["href", "https://e.example/"], ["rel", "nofollow"]])]);
  assert.deepEqual(Object.keys(schema.marks).sort(), ["code", "em", "link", "strong"]);
});
