import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError } from "../api/client";
import { retry } from "./retry";

const noSleep = (waits: number[]) => (ms: number) => {
  waits.push(ms);
  return Promise.resolve();
};

test("a read that fails twice is tried again, waiting longer each time", async () => {
  let calls = 0;
  const waits: number[] = [];
  const got = await retry(
    async () => {
      if (++calls < 3) throw new ApiError(503, { title: "busy" }, undefined);
      return "account";
    },
    { wanted: () => true, delaysMs: [10, 20], sleep: noSleep(waits) },
  );
  assert.equal(got, "account");
  assert.deepEqual(waits, [10, 20]);
});

test("Retry-After is honoured when it is longer than the next wait", async () => {
  let calls = 0;
  const waits: number[] = [];
  await retry(
    async () => {
      if (++calls < 2) throw new ApiError(503, { title: "busy" }, 3);
      return 1;
    },
    { wanted: () => true, delaysMs: [10], sleep: noSleep(waits) },
  );
  assert.deepEqual(waits, [3000]);
});

test("it stops once the answer is no longer wanted", async () => {
  let wanted = true;
  let calls = 0;
  const got = await retry(
    async () => {
      calls++;
      wanted = false;
      throw new Error("offline");
    },
    { wanted: () => wanted, delaysMs: [1], sleep: () => Promise.resolve() },
  );
  assert.equal(got, undefined);
  assert.equal(calls, 1);
});

test("401 and 403 are answers, not failures", async () => {
  for (const status of [401, 403]) {
    await assert.rejects(
      retry(() => Promise.reject(new ApiError(status, { title: "no" }, undefined)), { wanted: () => true, sleep: () => Promise.resolve() }),
      (e: unknown) => e instanceof ApiError && e.status === status,
    );
  }
});
