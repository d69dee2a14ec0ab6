/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import fixture from "./testdata/sanitize.json";
import { type HNode, normalize, sanitize, toXHTML, validURL } from "./xhtml";

const samples = fixture.samples as unknown as { html: string; in: HNode[]; out: HNode[] }[];

test("the sanitizer keeps what bluemonday's UGC policy keeps (pkg/templates fixture)", () => {
  assert.ok(samples.length > 300, "the fixture has its samples");
  const failed: string[] = [];
  for (const s of samples) {
    const got = JSON.stringify(normalize(sanitize(s.in)));
    const want = JSON.stringify(normalize(s.out));
    if (got !== want) failed.push(`${s.html}\n  got  ${got}\n  want ${want}`);
  }
  assert.deepEqual(failed.slice(0, 10), [], `${failed.length} of ${samples.length} samples differ`);
});

test("toXHTML writes one <div> root, XML-escaped, void elements closed", () => {
  const nodes: HNode[] = [{ t: "p", a: [], c: ["a < b & c", { t: "br", a: [], c: [] }] }, { t: "a", a: [["href", "/a?x=1&y=2"]], c: ["l"] }];
  assert.equal(toXHTML(nodes), '<div><p>a &lt; b &amp; c<br/></p><a href="/a?x=1&amp;y=2" rel="nofollow">l</a></div>');
  assert.equal(toXHTML([{ t: "div", a: [], c: [{ t: "p", a: [], c: ["x"] }] }]), "<div><p>x</p></div>");
  assert.equal(toXHTML([{ t: "p", a: [], c: [" "] }]), undefined);
  assert.equal(toXHTML([{ t: "script", a: [], c: ["alert(1)"] }]), undefined);
});

test("validURL refuses what Go would refuse or rewrite", () => {
  assert.equal(validURL(" https://example.com/a?b=c#d "), "https://example.com/a?b=c#d");
  assert.equal(validURL("HTTPS://Example.com"), "https://Example.com");
  assert.equal(validURL("/path"), "/path");
  assert.equal(validURL("javascript:alert(1)"), null);
  assert.equal(validURL("a:b"), null);
  assert.equal(validURL("https://exa mple.com"), null);
  assert.equal(validURL("https://example.com/ä"), null);
  assert.equal(validURL(""), null);
});
