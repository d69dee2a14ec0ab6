// Chunked uploads through Management's fileUpload operations (docs/files.md):
// POST /fileUpload starts an upload with its first chunk (Extension, Commit,
// File, in that order, so the server streams the file as it arrives), PUT
// /fileUpload/{token} appends the next, the chunk sent with Commit=true
// finishes it and the answer names the content (guid, extension, created:
// false when the same content was already stored).
//
// The file is read slice by slice (Blob.slice): at most one chunk of one
// upload is in flight and nothing of the file is held in the tab's memory
// (a slice of a file from disk is read by the browser's network stack as
// it sends it), so a 1 GiB file costs what a small one does.
//
// Interruptions (Pause, a dropped connection, a 429/503 with Retry-After)
// never restart a file: the server holds every chunk it acknowledged, and
// after an interruption the upload first asks the server how much it holds
// (a PUT with an empty File part appends nothing and answers the size) and
// continues from there. So a chunk whose request reached the server but
// whose answer was lost is not sent again, and one that did not reach it
// is. A lost connection is retried with a growing wait (1 s doubling to
// 15 s), at once when the browser says it is online again.
import { ApiError, OfflineError } from "../api/client";

/** FileUploadResult is the answer of the fileUpload operations (cms.management.v1.FileUploadResult). */
export interface FileUploadResult {
  /** Bytes the server holds so far (int64: a string on the wire). */
  size?: number | string;
  token?: string;
  extension?: string;
  guid?: string;
  created?: boolean;
}

/** ChunkRequest is one request of an upload: start (token null) or continue. */
export interface ChunkRequest {
  token: string | null;
  extension: string;
  commit: boolean;
  /** The chunk's bytes (a slice of the file; empty to ask for the size). */
  data: Blob;
  signal: AbortSignal;
}

/** Transport sends one chunk request. */
export type Transport = (req: ChunkRequest) => Promise<FileUploadResult>;

/** defaultChunkBytes: 8 MiB per request (the server takes up to files.maxChunkBytes, 32 MiB by default). */
export const defaultChunkBytes = 8 << 20;

export type UploadState = "queued" | "uploading" | "paused" | "reconnecting" | "done" | "failed";

/** Stored is the content a finished upload names. */
export interface Stored {
  guid: string;
  extension: string;
  size: number;
  /** false: the same content was already stored (the duplicate notice). */
  created: boolean;
}

export interface UploadOptions {
  chunkBytes?: number;
  /** Waits between retries (ms), the last repeated; the tests pass zeros. */
  backoff?: readonly number[];
  /** Resolves after ms, or earlier when wake is called (the browser is online again). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** extensionOf is a file name's extension with its dot ("" when it has none or it is not one the API takes). */
export function extensionOf(name: string): string {
  const i = name.lastIndexOf(".");
  if (i <= 0 || i === name.length - 1) return "";
  const ext = name.slice(i + 1).toLowerCase();
  return /^[a-z0-9_-]{1,32}$/.test(ext) ? "." + ext : "";
}

const wakers = new Set<() => void>();
if (typeof window !== "undefined") window.addEventListener("online", () => wakers.forEach((w) => w()));

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      wakers.delete(done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    wakers.add(done);
    signal.addEventListener("abort", done);
  });
}

/** Upload is one file's chunked upload; onChange is called after every change of its state or progress. */
export class Upload {
  state: UploadState = "queued";
  /** Bytes the server acknowledged. */
  acked = 0;
  /** Bytes sent in File parts, a re-sent chunk counted again. */
  sent = 0;
  /** Chunk requests answered or failed (the empty size probes included). */
  requests = 0;
  token: string | null = null;
  result: Stored | null = null;
  error: unknown = null;
  onChange: () => void = () => {};

  private readonly chunk: number;
  private readonly backoff: readonly number[];
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private ctl: AbortController | null = null;
  private probe = false;
  private commitLost = false;
  private resent = false;
  private running: Promise<void> | null = null;

  constructor(
    readonly file: Blob,
    readonly name: string,
    readonly extension: string,
    private readonly send: Transport,
    opts: UploadOptions = {},
  ) {
    this.chunk = Math.max(1, opts.chunkBytes ?? defaultChunkBytes);
    this.backoff = opts.backoff ?? [1000, 2000, 4000, 8000, 15000];
    this.sleep = opts.sleep ?? defaultSleep;
  }

  get size(): number {
    return this.file.size;
  }

  /** start runs the upload until it is done, failed or paused; the promise settles then. */
  start(): Promise<void> {
    if (this.state === "done" || this.state === "failed") return Promise.resolve();
    if (this.running) return this.running;
    this.set("uploading");
    this.running = this.run().finally(() => (this.running = null));
    return this.running;
  }

  /** pause stops after aborting the chunk in flight; resume (start) continues from what the server holds. */
  pause() {
    if (this.state !== "uploading" && this.state !== "reconnecting" && this.state !== "queued") return;
    this.set("paused");
    this.ctl?.abort();
  }

  /** cancel stops the upload and removes what the server holds of it. */
  async cancel(remove: (token: string) => Promise<unknown>) {
    this.pause();
    this.set("failed");
    if (this.token) await remove(this.token).catch(() => {});
    this.token = null;
  }

  private set(s: UploadState) {
    this.state = s;
    this.onChange();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.state === "uploading" || this.state === "reconnecting") {
      this.ctl = new AbortController();
      const signal = this.ctl.signal;
      try {
        if (this.probe && this.token) await this.askSize(signal);
        this.probe = false;
        await this.next(signal);
        failures = 0;
        if ((this.state as UploadState) === "reconnecting") this.set("uploading");
      } catch (e) {
        this.requests++;
        if ((this.state as UploadState) === "paused") {
          this.probe = true;
          return;
        }
        const wait = this.retryWait(e, failures);
        if (wait === null) {
          this.error = e;
          this.set("failed");
          return;
        }
        failures++;
        this.probe = true;
        this.set("reconnecting");
        await this.sleep(wait, signal);
      }
    }
  }

  /** retryWait is how long to wait before trying again after e (null: give up). */
  private retryWait(e: unknown, failures: number): number | null {
    const step = this.backoff[Math.min(failures, this.backoff.length - 1)] ?? 0;
    if (e instanceof OfflineError) return step;
    if (e instanceof ApiError && (e.status === 429 || e.status === 503 || e.status === 502 || e.status === 504)) {
      return e.retryAfter !== undefined ? e.retryAfter * 1000 : step;
    }
    return null;
  }

  /** askSize learns the bytes the server holds (an empty chunk appends nothing). */
  private async askSize(signal: AbortSignal) {
    try {
      const a = await this.send({ token: this.token, extension: this.extension, commit: false, data: new Blob([]), signal });
      this.requests++;
      this.acked = Number(a.size ?? 0);
      this.onChange();
    } catch (e) {
      // An unknown token after a commit whose answer was lost: the server
      // committed the file and forgot the upload. Send the file again (the
      // content is stored once; it is not a duplicate of someone else's).
      if (e instanceof ApiError && e.status === 400 && this.commitLost) {
        this.requests++;
        this.token = null;
        this.acked = 0;
        this.resent = true;
        this.onChange();
        return;
      }
      throw e;
    }
  }

  /** next sends the next chunk (the last one with Commit=true). */
  private async next(signal: AbortSignal) {
    const end = Math.min(this.acked + this.chunk, this.size);
    const commit = end === this.size;
    const data = this.file.slice(this.acked, end);
    this.sent += data.size;
    this.onChange();
    if (commit) this.commitLost = true;
    const a = await this.send({ token: this.token, extension: this.extension, commit, data, signal });
    this.requests++;
    if (commit) this.commitLost = false;
    this.acked = Number(a.size ?? end);
    if (a.token) this.token = a.token;
    if (a.guid) {
      // After a lost commit the file was sent again: "already stored" is then its own first copy.
      this.result = { guid: a.guid, extension: a.extension ?? this.extension, size: this.acked, created: a.created !== false || this.resent };
      this.token = null;
      this.set("done");
      return;
    }
    if (commit) throw new Error("the server answered the last chunk without the file's name");
    this.onChange();
  }
}

/** Queue runs at most parallel uploads at once, in the order they were added; paused ones make room. */
export class Queue {
  readonly uploads: Upload[] = [];
  onChange: () => void = () => {};

  constructor(private readonly parallel = 2) {}

  add(u: Upload) {
    const chain = u.onChange;
    u.onChange = () => {
      chain();
      this.onChange();
    };
    this.uploads.push(u);
    this.pump();
  }

  /** resume starts a paused upload again (ahead of the queue). */
  resume(u: Upload) {
    if (u.state !== "paused") return;
    void u.start().then(() => this.pump());
  }

  pump() {
    let active = this.uploads.filter((u) => u.state === "uploading" || u.state === "reconnecting").length;
    for (const u of this.uploads) {
      if (active >= this.parallel) break;
      if (u.state !== "queued") continue;
      active++;
      void u.start().then(() => this.pump());
    }
    this.onChange();
  }
}
