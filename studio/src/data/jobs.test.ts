/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  canKill, canRestart, createRequest, pollEvery, estimate, followLog, Kind, kindOf, maxSelection, parseIds, parseJob, remaining, startable,
  stateName, uploadInput,
} from "./jobs";

test("a job reads its kind, state and times; kill only while new or running, restart only once finished", () => {
  const j = parseJob({ id: 17, branchRef: 12, definitionRef: 1200, state: 1, started: "2026-12-04T01:00:00Z", user: "admin", artifacts: false });
  assert.deepEqual([j.id, j.branch, j.kind, j.state, j.user, j.restarts], [17, 12, "exportJson", "running", "admin", 0]);
  assert.equal(canKill(j), true);
  assert.equal(canRestart(j), false);
  const done = parseJob({ id: 18, definitionRef: 1202, state: 2, artifacts: true });
  assert.deepEqual([done.kind, done.state, canKill(done), canRestart(done), done.artifacts], ["importJson", "succeeded", false, true, true]);
  assert.equal(canRestart(parseJob({ state: 3 })), true);
  assert.equal(parseJob({ state: 2, stateMessage: "succeeded" }).message, "", "the badge says it");
  assert.equal(parseJob({ state: 3, stateMessage: "killed by admin" }).message, "killed by admin");
  assert.equal(parseJob({ definitionRef: 99001 }).kind, undefined);
  assert.equal(kindOf(1205), "promoteRelease");
  // The request states: a kill on its way is still running, a restart on its way is queued.
  assert.deepEqual([stateName(4), stateName(5), stateName(0)], ["running", "new", "new"]);
});

test("re-index and clean-up are offered to administrators only", () => {
  assert.deepEqual(startable(false), ["exportJson", "exportCsv", "importJson"]);
  assert.deepEqual(startable(true), ["exportJson", "exportCsv", "importJson", "reindex", "cleanupFiles"]);
});

test("the estimate: the rest at the rate so far; none before a rate or once done", () => {
  const t0 = "2026-12-04T01:00:00Z";
  const at = (s: number) => Date.parse(t0) + s * 1000;
  assert.equal(estimate(0.25, t0, at(10)), 30_000);
  assert.equal(estimate(0.5, t0, at(3)), 3_000);
  assert.equal(estimate(0, t0, at(10)), undefined);
  assert.equal(estimate(undefined, t0, at(10)), undefined);
  assert.equal(estimate(1, t0, at(10)), undefined);
  assert.equal(estimate(0.5, "", at(10)), undefined);
  assert.equal(estimate(0.5, t0, at(0)), undefined);
  assert.deepEqual(remaining(400), { unit: "s", n: 1 });
  assert.deepEqual(remaining(65_500), { unit: "s", n: 66 });
  assert.deepEqual(remaining(30 * 60_000), { unit: "min", n: 30 });
  assert.deepEqual(remaining(5 * 3600_000), { unit: "h", n: 5 });
});

test("the log grows at its end; a stale read keeps it; a log that no longer starts with what is shown replaces it", () => {
  assert.deepEqual(followLog("", "a\n"), { text: "a\n", added: "a\n", replaced: false });
  assert.deepEqual(followLog("a\n", "a\nb\n"), { text: "a\nb\n", added: "b\n", replaced: false });
  assert.deepEqual(followLog("a\nb\n", "a\nb\n"), { text: "a\nb\n", added: "", replaced: false });
  assert.deepEqual(followLog("a\nb\n", "c\n"), { text: "c\n", added: "c\n", replaced: true });
  // A stale read (a start of what is shown, or nothing) never takes lines away.
  assert.deepEqual(followLog("a\nb\n", "a\n"), { text: "a\nb\n", added: "", replaced: false });
  assert.deepEqual(followLog("a\nb\n", ""), { text: "a\nb\n", added: "", replaced: false });
});

test("a pasted selection: numbers in order without repeats; the rest named; at most 10,000", () => {
  assert.deepEqual(parseIds("12, 13\n14 12;15"), { ids: [12, 13, 14, 15], bad: [], tooMany: false });
  assert.deepEqual(parseIds("12 x 1.5 -3 0 99999999999"), { ids: [12], bad: ["x", "1.5", "-3", "0", "99999999999"], tooMany: false });
  assert.deepEqual(parseIds("  "), { ids: [], bad: [], tooMany: false });
  const many = Array.from({ length: maxSelection + 1 }, (_, i) => i + 1).join(",");
  assert.equal(parseIds(many).tooMany, true);
  assert.equal(parseIds(many.slice(0, many.lastIndexOf(","))).tooMany, false);
});

test("start requests: a selection as objIds, a type as its parameter, an import's input, admin parameters", () => {
  assert.deepEqual(createRequest({ kind: "exportJson", branch: 12, ids: [5, 6], type: "ignored", language: 202 }),
    { branchId: 12, jobDefinitionId: Kind.exportJson, language: 202, objIds: [5, 6] });
  assert.deepEqual(createRequest({ kind: "exportCsv", branch: 12, ids: [], type: "product" }),
    { branchId: 12, jobDefinitionId: 1201, parameters: [{ name: "type", values: ["product"] }] });
  assert.deepEqual(createRequest({ kind: "importJson", branch: 4, input: { token: "ab", name: "in.json" }, batchSize: 200 }),
    { branchId: 4, jobDefinitionId: 1202, inputFile: { token: "ab", name: "in.json" }, parameters: [{ name: "batchSize", values: ["200"] }] });
  assert.deepEqual(createRequest({ kind: "reindex", branch: 4, reindexBranch: 12 }),
    { branchId: 4, jobDefinitionId: 1203, parameters: [{ name: "branch", values: ["12"] }] });
  assert.deepEqual(createRequest({ kind: "reindex", branch: 4 }), { branchId: 4, jobDefinitionId: 1203 });
  assert.deepEqual(createRequest({ kind: "cleanupFiles", branch: 4, dryRun: true, minAge: "48h" }),
    { branchId: 4, jobDefinitionId: 1204, parameters: [{ name: "dryRun", values: ["true"] }, { name: "minAge", values: ["48h"] }] });
});

test("job input goes slice by slice: the first request opens it, the others continue its token", async () => {
  const sent: { url: string; bytes: string }[] = [];
  const file = new Blob(["0123456789"]);
  const seen: number[] = [];
  const token = await uploadInput(file, "in.json", (n) => seen.push(n), async (url, chunk) => {
    sent.push({ url, bytes: await chunk.text() });
    return { token: "t1", size: 0 };
  }, 4);
  assert.equal(token, "t1");
  assert.deepEqual(sent, [
    { url: "/apis/cms/v1/jobInput", bytes: "0123" },
    { url: "/apis/cms/v1/jobInput/t1", bytes: "4567" },
    { url: "/apis/cms/v1/jobInput/t1", bytes: "89" },
  ]);
  assert.deepEqual(seen, [4, 8, 10]);
  // An empty file is one (empty) request.
  const empty: string[] = [];
  await uploadInput(new Blob([]), "e.json", undefined, async (url) => {
    empty.push(url);
    return { token: "t2", size: 0 };
  }, 4);
  assert.deepEqual(empty, ["/apis/cms/v1/jobInput"]);
  // A failing first slice has no token to cancel and passes its error on.
  await assert.rejects(uploadInput(file, "in.json", undefined, async () => {
    throw new Error("offline");
  }, 4), /offline/);
});

test("a job is followed closely in its first 5 s, then every second", () => {
  const j = parseJob({ state: 1, created: "2026-12-04T01:00:00Z", started: "2026-12-04T01:00:02Z" });
  const at = (s: number) => Date.parse("2026-12-04T01:00:00Z") + s * 1000;
  assert.equal(pollEvery(j, at(3)), 250);
  assert.equal(pollEvery(j, at(6.9)), 250);
  assert.equal(pollEvery(j, at(7.1)), 1000);
  const queued = parseJob({ state: 0, created: "2026-12-04T01:00:00Z" });
  assert.equal(pollEvery(queued, at(1)), 250);
  assert.equal(pollEvery(queued, at(60)), 1000);
});
