/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError, OfflineError } from "../api/client";
import { type ChunkRequest, extensionOf, type FileUploadResult, Queue, Upload } from "./upload";

/**
 * fakeServer keeps an upload's bytes like Management does: a POST starts,
 * a PUT appends, an empty chunk appends nothing, Commit names the content.
 * fail decides per request whether it is lost before the server (before),
 * after the server stored it (after: the answer is lost) or answered.
 */
function fakeServer(stored: Set<string> = new Set(), fail: (n: number, r: ChunkRequest) => "before" | "after" | "ok" = () => "ok") {
  const uploads = new Map<string, number[]>();
  const log: { token: string | null; bytes: number; commit: boolean }[] = [];
  let n = 0;
  const send = async (r: ChunkRequest): Promise<FileUploadResult> => {
    const k = fail(n++, r);
    log.push({ token: r.token, bytes: r.data.size, commit: r.commit });
    if (r.signal.aborted) throw new DOMException("aborted", "AbortError");
    if (k === "before") throw new OfflineError(new TypeError("Failed to fetch"));
    const bytes = [...new Uint8Array(await r.data.arrayBuffer())];
    let token = r.token;
    if (token === null) {
      token = `t${uploads.size + 1}`;
      uploads.set(token, []);
    }
    const held = uploads.get(token);
    if (!held) throw new ApiError(400, { detail: "unknown upload" }, undefined);
    held.push(...bytes);
    let res: FileUploadResult = { size: String(held.length), token, extension: r.extension };
    if (r.commit) {
      const guid = "g-" + held.join(".");
      const created = !stored.has(guid);
      stored.add(guid);
      uploads.delete(token);
      res = { size: String(held.length), extension: r.extension, guid, created };
    }
    if (k === "after") throw new OfflineError(new TypeError("Failed to fetch"));
    return res;
  };
  return { send, log, uploads, stored };
}

const file = (n: number) => new Blob([new Uint8Array(Array.from({ length: n }, (_, i) => i % 251))]);
const noWait = { backoff: [0], sleep: async () => {} };

test("a file goes up in chunks, slice by slice, the last with Commit, and names its content", async () => {
  const srv = fakeServer();
  const u = new Upload(file(10), "a.png", ".png", srv.send, { chunkBytes: 4, ...noWait });
  await u.start();
  assert.equal(u.state, "done");
  assert.deepEqual(srv.log, [{ token: null, bytes: 4, commit: false }, { token: "t1", bytes: 4, commit: false }, { token: "t1", bytes: 2, commit: true }]);
  assert.equal(u.acked, 10);
  assert.equal(u.sent, 10);
  assert.equal(u.result?.created, true);
  assert.equal(u.result?.size, 10);
  assert.match(u.result?.guid ?? "", /^g-0\.1\.2/);
});

test("the same content again: created false (the duplicate notice)", async () => {
  const srv = fakeServer();
  await new Upload(file(5), "a.png", ".png", srv.send, { chunkBytes: 4, ...noWait }).start();
  const again = new Upload(file(5), "copy.png", ".png", srv.send, { chunkBytes: 4, ...noWait });
  await again.start();
  assert.equal(again.result?.created, false);
});

test("an empty file is one request that commits", async () => {
  const srv = fakeServer();
  const u = new Upload(file(0), "e.txt", ".txt", srv.send, noWait);
  await u.start();
  assert.equal(u.state, "done");
  assert.deepEqual(srv.log, [{ token: null, bytes: 0, commit: true }]);
});

test("a chunk lost on the way is sent again after asking the server what it holds", async () => {
  // Request 2 (the second PUT) never reaches the server, nor the first probe.
  const srv = fakeServer(new Set(), (n) => (n === 2 || n === 3 ? "before" : "ok"));
  const u = new Upload(file(12), "a.bin", ".bin", srv.send, { chunkBytes: 4, ...noWait });
  const states: string[] = [];
  u.onChange = () => states.at(-1) !== u.state && states.push(u.state);
  await u.start();
  assert.equal(u.state, "done");
  assert.ok(states.includes("reconnecting"));
  // POST 4, PUT 4, PUT 4 lost, probe lost, probe (empty) → 8, PUT 4 commit.
  assert.deepEqual(srv.log.map((l) => l.bytes), [4, 4, 4, 0, 0, 4]);
  assert.equal(u.sent - u.size, 4, "the lost chunk is the only one sent twice");
  assert.equal(u.result?.size, 12);
  assert.match(u.result?.guid ?? "", /^g-0\.1\.2\.3\.4\.5\.6\.7\.8\.9\.10\.11$/);
});

test("a chunk the server stored but whose answer was lost is not sent again", async () => {
  const srv = fakeServer(new Set(), (n) => (n === 1 ? "after" : "ok"));
  const u = new Upload(file(12), "a.bin", ".bin", srv.send, { chunkBytes: 4, ...noWait });
  await u.start();
  assert.equal(u.state, "done");
  // POST 4, PUT 4 (stored, answer lost), probe → 8, PUT 4 commit.
  assert.deepEqual(srv.log.map((l) => l.bytes), [4, 4, 0, 4]);
  assert.equal(u.sent, 12, "no byte sent twice");
  assert.match(u.result?.guid ?? "", /^g-0\.1\.2\.3\.4\.5\.6\.7\.8\.9\.10\.11$/);
});

test("a lost commit answer: the file is sent again and not called a duplicate", async () => {
  const srv = fakeServer(new Set(), (n) => (n === 1 ? "after" : "ok"));
  const u = new Upload(file(6), "a.bin", ".bin", srv.send, { chunkBytes: 4, ...noWait });
  await u.start();
  assert.equal(u.state, "done");
  assert.equal(u.result?.created, true);
  assert.equal(srv.stored.size, 1);
});

test("pause aborts the chunk in flight; resume asks the size and continues from it", async () => {
  let release: () => void = () => {};
  const srv = fakeServer();
  let calls = 0;
  const u = new Upload(file(12), "a.bin", ".bin", async (r) => {
    if (++calls === 2) {
      // The second chunk hangs until the pause aborts it.
      await new Promise<void>((resolve) => {
        release = resolve;
        r.signal.addEventListener("abort", () => resolve());
      });
    }
    return srv.send(r);
  }, { chunkBytes: 4, ...noWait });
  const run = u.start();
  await until(() => calls >= 2);
  u.pause();
  await run;
  assert.equal(u.state, "paused");
  assert.equal(u.acked, 4);
  release();
  await u.start();
  assert.equal(u.state, "done");
  assert.deepEqual(srv.log.map((l) => l.bytes), [4, 4, 0, 4, 4]);
  assert.equal(u.sent - u.size, 4);
});

test("a refusal other than a lost connection or 429/503 fails the upload with the API's problem", async () => {
  const u = new Upload(file(3), "a.bin", ".bin", async () => {
    throw new ApiError(413, { detail: "a chunk may hold at most 1 bytes" }, undefined);
  }, noWait);
  await u.start();
  assert.equal(u.state, "failed");
  assert.ok(u.error instanceof ApiError);
});

test("429 waits as long as Retry-After says", async () => {
  const waits: number[] = [];
  let n = 0;
  const srv = fakeServer();
  const u = new Upload(file(3), "a.bin", ".bin", async (r) => {
    if (n++ === 0) throw new ApiError(429, { detail: "too many" }, 7);
    return srv.send(r);
  }, { backoff: [0], sleep: async (ms) => void waits.push(ms) });
  await u.start();
  assert.equal(u.state, "done");
  assert.deepEqual(waits, [7000]);
});

test("the queue runs two at once, in order; a paused one makes room", async () => {
  const gates: (() => void)[] = [];
  const srv = fakeServer();
  const slow = async (r: ChunkRequest) => {
    await new Promise<void>((resolve) => {
      gates.push(resolve);
      r.signal.addEventListener("abort", () => resolve());
    });
    return srv.send(r);
  };
  const q = new Queue(2);
  const us = [1, 2, 3].map((i) => new Upload(file(2), `${i}.bin`, ".bin", slow, noWait));
  us.forEach((u) => q.add(u));
  assert.deepEqual(us.map((u) => u.state), ["uploading", "uploading", "queued"]);
  us[0]!.pause();
  await until(() => us[2]!.state === "uploading");
  assert.deepEqual(us.map((u) => u.state), ["paused", "uploading", "uploading"]);
  await until(() => {
    gates.splice(0).forEach((g) => g());
    return us[1]!.state === "done" && us[2]!.state === "done";
  });
  assert.equal(us[0]!.state, "paused");
  q.resume(us[0]!);
  await until(() => {
    gates.splice(0).forEach((g) => g());
    return us[0]!.state === "done";
  });
});

/** until polls cond every millisecond, failing after 5 s. */
async function until(cond: () => boolean) {
  for (let i = 0; i < 5000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 1));
  }
  assert.fail("timed out");
}

test("extensions: lower case with the dot, none for names the API would refuse", () => {
  assert.equal(extensionOf("Photo.JPG"), ".jpg");
  assert.equal(extensionOf("archive.tar.gz"), ".gz");
  assert.equal(extensionOf("README"), "");
  assert.equal(extensionOf(".bashrc"), "");
  assert.equal(extensionOf("x."), "");
  assert.equal(extensionOf("a.b c"), "");
});
