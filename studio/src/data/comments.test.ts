/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { bodyBytes, edited, fromBody, toBody } from "./comments";

test("a comment's text becomes one escaped <div> with line breaks, and reads back as written", () => {
  const text = `Check the <price> & "terms"\nbefore Friday's launch`;
  const body = toBody(text);
  assert.equal(body, "<div>Check the &lt;price&gt; &amp; &quot;terms&quot;<br/>before Friday&#39;s launch</div>");
  assert.equal(fromBody(body), text);
  assert.equal(toBody("  padded \r\n"), "<div>padded</div>");
});

test("richer XHTML from another client reads as its text", () => {
  assert.equal(fromBody("<div><p>One <b>bold</b></p><p>Two&#x21; &#8364;5 &nbsp;</p></div>"), "One bold\nTwo! €5 \u00a0");
  assert.equal(fromBody("<div/>"), "");
  assert.equal(fromBody(undefined), "");
  assert.equal(fromBody("<div>&bogus; &#99999999;</div>"), "&bogus; &#99999999;");
});

test("the size counts UTF-8 bytes of the body", () => {
  assert.equal(bodyBytes("é"), "<div></div>".length + 2);
});

test("edited: modified a second or more after created", () => {
  assert.equal(edited({ created: "2026-01-01T10:00:00Z", modified: "2026-01-01T10:00:00.300Z" }), false);
  assert.equal(edited({ created: "2026-01-01T10:00:00Z", modified: "2026-01-01T10:00:05Z" }), true);
  assert.equal(edited({ created: "2026-01-01T10:00:00Z" }), false);
});
