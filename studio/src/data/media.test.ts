/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CmsObject } from "../api/generated/management";
import { B, binRefAttributes, bpoRows, fileNameOf, isImage, isProxyType, itemOfDelivery, mediaFilter, nameOfFile, send, usagesOf } from "./media";
import { OfflineError } from "../api/client";

const v = (attribute: number, value: unknown, language = 0) => ({ attribute, language, variant: 0, value });

test("a Delivery object is a grid item: name, content, extension, stored file name", () => {
  const it = itemOfDelivery({
    meta: { id: 7 }, displayName: "Sunset",
    props: { externalBinaryMD5: "0a1b", externalBinaryFileExtension: ".png", externalBinaryFileName: "sunset.png", externalBinaryThumbnail: 7 },
  });
  assert.deepEqual(it, { id: 7, name: "Sunset", md5: "0a1b", extension: ".png", fileName: "sunset.png" });
  assert.equal(itemOfDelivery({ meta: { id: 8 }, props: { attributeName: "Plan" } }).name, "Plan");
});

test("download names: the stored name, else the object's name plus the extension", () => {
  assert.equal(fileNameOf({ name: "Sunset", extension: ".png", fileName: "IMG_1.PNG" }), "IMG_1.PNG");
  assert.equal(fileNameOf({ name: "Sunset", extension: ".png", fileName: "" }), "Sunset.png");
  assert.equal(fileNameOf({ name: "plan.pdf", extension: ".pdf", fileName: "" }), "plan.pdf");
  assert.equal(fileNameOf({ name: "", extension: "", fileName: "" }), "file");
});

test("the search is one Delivery filter: the name's words and the file type, quoted when needed", () => {
  assert.equal(mediaFilter("", ""), "");
  assert.equal(mediaFilter(" sunset ", ""), "displayName:sunset");
  assert.equal(mediaFilter("red sunset", ".png"), 'displayName:"red sunset"&&externalBinaryFileExtension=.png');
  assert.equal(mediaFilter('a"&&meta.id>0', ""), 'displayName:"a\\"&&meta.id>0"');
  assert.equal(mediaFilter("x".repeat(500), "").length, "displayName:".length + 200);
});

test("proxy types are the types with 5009 true", () => {
  const t = (vals: ReturnType<typeof v>[]) => ({ id: 1, name: "T", object: { meta: { id: 1 }, values: vals } as CmsObject });
  assert.equal(isProxyType(t([v(B.proxyType, true)])), true);
  assert.equal(isProxyType(t([v(B.proxyType, false)])), false);
  assert.equal(isProxyType(t([])), false);
});

test("a new BPO's rows: its name in the UI language, content, extension and the file's name; a replacement leaves the name", () => {
  const f = { guid: "g", extension: ".png", size: 3, created: true };
  assert.deepEqual(bpoRows(f, "a.png", "a", 202), [v(B.name, "a", 202), v(B.md5, "g"), v(B.extension, ".png"), v(B.fileName, "a.png")]);
  assert.deepEqual(bpoRows(f, "b.png"), [v(B.md5, "g"), v(B.extension, ".png"), v(B.fileName, "b.png")]);
  assert.equal(nameOfFile("Sunset.PNG".toLowerCase(), ".png"), "sunset");
  assert.equal(nameOfFile("notes", ""), "notes");
  assert.equal(nameOfFile(".png", ".png"), ".png");
});

test("images have thumbnails", () => {
  assert.equal(isImage(".PNG"), true);
  assert.equal(isImage(".webp"), true);
  assert.equal(isImage(".pdf"), false);
});

test("BinRef attributes by ApiIdentifier with their names, deleted ones and those without ApiIdentifier left out", () => {
  const a = (id: number, dt: string, api?: string, deleted = false, name?: string): CmsObject =>
    ({ meta: { id, apiIdentifier: api, deleted }, values: [v(B.dataType, dt), ...(name ? [v(B.name, name, 202)] : [])] });
  assert.deepEqual(binRefAttributes([a(1, "BinRef", "photo", false, "Foto"), a(2, "ObjRef", "author"), a(3, "BinRef"), a(4, "BinRef", "old", true), a(5, "BinRef", "cover")], [202]),
    [{ api: "cover", name: "cover" }, { api: "photo", name: "Foto" }]);
});

test("where used: each referring object once, with the attributes it refers through, named from refs", () => {
  const us = usagesOf({ meta: { id: 9 }, reverse: { photo: [12, 11], cover: [12], other: "x" } },
    [{ meta: { id: 12, typeRef: 50 }, displayName: "About us" }, { meta: { id: 11, typeRef: 50 }, displayName: "Team" }],
    [{ api: "photo", name: "Photo" }]);
  assert.deepEqual(us, [
    { id: 12, name: "About us", typeRef: 50, attributes: ["Photo", "cover"] },
    { id: 11, name: "Team", typeRef: 50, attributes: ["Photo"] },
  ]);
  assert.deepEqual(usagesOf({ meta: { id: 9 }, reverse: { photo: [] } }, []), []);
  assert.deepEqual(usagesOf({ meta: { id: 9 }, reverse: { photo: [3] } }, [])[0]?.name, "#3");
  assert.deepEqual(usagesOf(undefined, []), []);
});

test("a chunk is one multipart request: Extension and Commit before File (the server streams the file), the token in the path", async () => {
  const saved = globalThis.fetch;
  const seen: { method: string; url: string; keys: string[]; size: number }[] = [];
  globalThis.fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    const f = init?.body as FormData;
    seen.push({ method: init?.method ?? "", url: String(url), keys: [...f.keys()], size: (f.get("File") as Blob).size });
    return new Response(JSON.stringify({ size: "5", token: "abc.png", extension: ".png" }), { status: 200, headers: { "Content-Type": "application/json" } });
  }) as typeof fetch;
  try {
    const ac = new AbortController();
    const a = await send({ token: null, extension: ".png", commit: false, data: new Blob(["hello"]), signal: ac.signal });
    assert.equal(a.token, "abc.png");
    await send({ token: "abc.png", extension: ".png", commit: true, data: new Blob([]), signal: ac.signal });
    assert.deepEqual(seen.map((x) => [x.method, x.url.replace(/^.*\/apis/, "/apis"), x.keys.join(), x.size]), [
      ["POST", "/apis/cms/v1/fileUpload", "Extension,Commit,File", 5],
      ["PUT", "/apis/cms/v1/fileUpload/abc.png", "Commit,File", 0],
    ]);
    globalThis.fetch = (async () => { throw new TypeError("Failed to fetch"); }) as typeof fetch;
    await assert.rejects(send({ token: "abc.png", extension: ".png", commit: false, data: new Blob([]), signal: ac.signal }), OfflineError);
  } finally {
    globalThis.fetch = saved;
  }
});
