/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { format, parse, type Route } from "./router";

test("a route survives format and parse", () => {
  const cases: Route[] = [
    { section: "content", query: {} },
    { branch: "4", section: "content", type: "article", query: { lang: "201,202", q: "x y" } },
    { branch: "draft", section: "content", type: "article", object: "1234", query: {} },
    { branch: "4", section: "model", type: "my type/ä", query: {} },
    { branch: "4", section: "webhooks", query: {} },
    { branch: "12", section: "webhooks", webhook: "11007", query: {} },
    { branch: "12", section: "code", query: {} },
    { section: "users", query: {} },
    { section: "users", user: "11012", query: {} },
    { section: "account", query: {} },
    { branch: "4", section: "operations", query: {} },
    { branch: "5", section: "media", query: { type: "11020", q: "red sunset", ext: ".png", file: "11031" } },
    { branch: "12", section: "jobs", query: { state: "running" } },
    { branch: "12", section: "jobs", job: "31", query: {} },
  ];
  for (const r of cases) {
    const url = new URL(format(r), "http://h");
    assert.deepEqual(parse(url.pathname, url.search), r);
  }
});

test("an unknown path is the home view", () => {
  assert.deepEqual(parse("/studio/whatever/x", ""), { section: "content", query: {} });
  assert.deepEqual(parse("/elsewhere", "?a=1"), { section: "content", query: { a: "1" } });
});
