/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { codeFileName, codeMediaType } from "./codegen";

test("the models' file is named after the branch, made safe, with the language's extension", () => {
  assert.equal(codeFileName("Spring sale", "csharp"), "models-Spring-sale.cs");
  assert.equal(codeFileName("Frühling/2027", "typescript"), "models-Fruhling-2027.ts");
  assert.equal(codeFileName("../..", "csharp"), "models-branch.cs");
  assert.equal(codeFileName("///", "typescript"), "models-branch.ts");
  assert.match(codeMediaType("csharp"), /^text\/x-csharp/);
  assert.match(codeMediaType("typescript"), /^text\/typescript/);
});
