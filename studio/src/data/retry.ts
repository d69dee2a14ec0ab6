// retry runs a read until it succeeds, waiting longer after each failure
// (a server shedding load, a dropped connection), for as long as the caller
// still wants the answer. A 401 or 403 is an answer, not a failure: it is
// returned to the caller at once (the session handles a 401).
import { ApiError } from "../api/client";

/** RetryOptions: the waits between attempts (the last repeats) and whether the answer is still wanted. */
export interface RetryOptions {
  delaysMs?: readonly number[];
  wanted: () => boolean;
  sleep?: (ms: number) => Promise<void>;
}

const defaultDelays = [500, 1000, 2000, 4000, 8000] as const;

/** retry returns fn's result, or undefined once the answer is no longer wanted; it rethrows a 401/403. */
export async function retry<T>(fn: () => Promise<T>, opts: RetryOptions): Promise<T | undefined> {
  const delays = opts.delaysMs ?? defaultDelays;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 0; opts.wanted(); attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 403)) throw e;
      const retryAfterMs = e instanceof ApiError && e.retryAfter ? e.retryAfter * 1000 : 0;
      await sleep(Math.max(retryAfterMs, delays[Math.min(attempt, delays.length - 1)] ?? 0));
    }
  }
  return undefined;
}
