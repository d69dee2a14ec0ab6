/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { SSEParser, type SSEMessage } from "./sse";

function all(chunks: string[], p = new SSEParser()): SSEMessage[] {
  return chunks.flatMap((c) => p.push(c));
}

test("an event with id, kind and JSON data", () => {
  assert.deepEqual(all(['id: 57\nevent: created\ndata: {"version":57}\n\n']), [
    { type: "event", event: "created", data: '{"version":57}', id: "57" },
  ]);
});

test("multi-line data is joined with newlines; no space after the colon is fine", () => {
  assert.deepEqual(all(["data:first\ndata: second\ndata\n\n"]), [
    { type: "event", event: "message", data: "first\nsecond\n", id: "" },
  ]);
});

test("comments (heartbeats) and retry frames are reported, not dispatched as events", () => {
  assert.deepEqual(all([": heartbeat 57\nretry: 2000\nretry: soon\n\n"]), [
    { type: "comment", text: "heartbeat 57" },
    { type: "retry", ms: 2000 },
  ]);
});

test("chunks split anywhere, CRLF and CR line ends", () => {
  const text = "id: 1\r\nevent: updated\r\ndata: a\r\n\r\nid: 2\revent: deleted\rdata: b\r\r";
  const split = text.split("");
  assert.deepEqual(all(split), [
    { type: "event", event: "updated", data: "a", id: "1" },
    { type: "event", event: "deleted", data: "b", id: "2" },
  ]);
});

test("an incomplete event is held until its blank line", () => {
  const p = new SSEParser();
  assert.deepEqual(p.push("id: 9\nevent: created\ndata: {"), []);
  assert.deepEqual(p.push("}\n"), []);
  assert.deepEqual(p.push("\n"), [{ type: "event", event: "created", data: "{}", id: "9" }]);
});

test("the last id is kept across events and an id with NUL is ignored", () => {
  const p = new SSEParser("5");
  assert.deepEqual(all(["data: x\n\nid: 7\n\nid: 8\0\ndata: y\n\n"], p), [
    { type: "event", event: "message", data: "x", id: "5" },
    { type: "event", event: "message", data: "y", id: "7" },
  ]);
  assert.equal(p.lastEventId, "7");
});

test("an event without data is not dispatched and its kind does not leak into the next", () => {
  assert.deepEqual(all(["event: created\n\ndata: z\n\n"]), [{ type: "event", event: "message", data: "z", id: "" }]);
});
