// The studio's one way to the API: typed calls of the four groups'
// operations (types generated from the served OpenAPI documents), the
// bearer token, ETags and If-Match, and ProblemDetails turned into errors.
import * as delivery from "./generated/delivery";
import * as index from "./generated/index";
import * as management from "./generated/management";
import * as rendering from "./generated/rendering";

const groups = {
  management: management.operations,
  delivery: delivery.operations,
  index: index.operations,
  rendering: rendering.operations,
};

export interface GroupOperations {
  management: management.Operations;
  delivery: delivery.Operations;
  index: index.Operations;
  rendering: rendering.Operations;
}

export type Group = keyof GroupOperations;
export type OperationOf<G extends Group> = keyof GroupOperations[G] & string;
type Op<G extends Group, K extends OperationOf<G>> = GroupOperations[G][K] extends {
  params: infer P;
  body: infer B;
  answer: infer A;
}
  ? { params: P; body: B; answer: A }
  : never;

/** A ProblemDetails answer (RFC 7807) as the API sends it, with the members the API adds. */
export type Problem = management.ProblemDetails & {
  reason?: string;
  limit?: string;
  [key: string]: unknown;
};

/** ApiError is a non-2xx answer: its status, ProblemDetails and Retry-After. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
    readonly retryAfter: number | undefined,
  ) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.name = "ApiError";
  }
}

/** OfflineError: the request did not reach the server. */
export class OfflineError extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = "OfflineError";
  }
}

export interface CallOptions {
  /** If-Match: the ETag the caller read (a stale one answers 412). */
  ifMatch?: string;
  /** If-None-Match: an ETag held (304 answers the cached value). */
  ifNoneMatch?: string;
  signal?: AbortSignal;
  /** X-Cms-Min-Version: read what this transaction wrote. */
  minVersion?: number;
  /** Sent without the bearer token (the login itself). */
  anonymous?: boolean;
  /** Basic credentials instead of the token (the login). */
  basic?: { user: string; password: string };
  /** The HTTP cache mode of a blob read ("no-cache": revalidate bytes whose address names no content, a thumbnail after a replaced file). */
  cache?: RequestCache;
  /** A write that writes nothing (the access probe): not reported to onWrite, so the live stream does not wait for it. */
  untracked?: boolean;
}

export interface Answer<T> {
  status: number;
  data: T;
  etag: string | null;
}

/** buildPath fills a path template's {name} segments and appends the rest as the query. */
export function buildPath(template: string, params: Record<string, unknown>): string {
  const used = new Set<string>();
  let path = template.replace(/\{([^}=]+)(=[^}]*)?\}/g, (_, name: string) => {
    used.add(name);
    const v = params[name];
    if (v === undefined || v === null || v === "") throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(String(v));
  });
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (used.has(k) || v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, String(x)));
    else q.set(k, String(v));
  }
  const qs = q.toString();
  if (qs) path += "?" + qs;
  return path;
}

export type TokenSource = () => string | null;

export class Api {
  /** Called on a 401 of an authenticated call with the token it sent: the session is gone, unless it moved on. */
  onUnauthorized: ((token: string | null, detail?: string) => void) | null = null;
  /** Called with every write (not GET/HEAD) as it starts; the promise is its answer (the live stream marks its transaction as this tab's). */
  onWrite: ((answer: Promise<unknown>) => void) | null = null;

  constructor(
    private readonly origin: string,
    private readonly token: TokenSource,
  ) {}

  async call<G extends Group, K extends OperationOf<G>>(
    group: G,
    op: K,
    params: Op<G, K>["params"],
    body?: Op<G, K>["body"],
    opts: CallOptions = {},
  ): Promise<Answer<Op<G, K>["answer"]>> {
    const spec = (groups[group] as Record<string, { method: string; path: string }>)[op];
    if (!spec) throw new Error(`unknown operation ${group}.${op}`);
    const answer = this.request<Op<G, K>["answer"]>(spec.method, buildPath(spec.path, params as Record<string, unknown>), body, opts);
    if (spec.method !== "GET" && spec.method !== "HEAD" && !opts.untracked) this.onWrite?.(answer);
    return answer;
  }

  /**
   * blob GETs an operation's bytes (a thumbnail, a binary) with the bearer
   * token: an <img src> cannot send it, so the studio shows such bytes
   * through a blob: URL (CSP img-src allows blob:).
   */
  async blob<G extends Group, K extends OperationOf<G>>(group: G, op: K, params: Op<G, K>["params"], opts: CallOptions = {}): Promise<Blob> {
    const spec = (groups[group] as Record<string, { method: string; path: string }>)[op];
    if (!spec || spec.method !== "GET") throw new Error(`no GET operation ${group}.${op}`);
    const headers: Record<string, string> = {};
    const t = this.token();
    if (t) headers.Authorization = "Bearer " + t;
    let resp: Response;
    try {
      resp = await fetch(this.origin + buildPath(spec.path, params as Record<string, unknown>), { headers, signal: opts.signal, credentials: "omit", ...(opts.cache ? { cache: opts.cache } : {}) });
    } catch (e) {
      if (e instanceof DOMException && e.name === "AbortError") throw e;
      throw new OfflineError(e);
    }
    if (!resp.ok) {
      let problem: Problem = { status: resp.status, title: resp.statusText };
      try {
        problem = (await resp.json()) as Problem;
      } catch {
        /* not ProblemDetails */
      }
      if (resp.status === 401) this.onUnauthorized?.(t, problem.detail || problem.title);
      throw new ApiError(resp.status, problem, undefined);
    }
    return resp.blob();
  }

  /**
   * form sends a multipart form (a chunk of an upload: the fileUpload
   * operations take multipart/form-data, which the served OpenAPI documents
   * do not describe) with the bearer token, and reads the JSON answer;
   * errors as for every call (ApiError, OfflineError, 401 ends the session).
   */
  async form<T>(method: "POST" | "PUT", path: string, body: FormData, opts: CallOptions = {}): Promise<Answer<T>> {
    return this.requestOnce<T>(method, path, body, opts);
  }

  /**
   * request sends an HTTP request to a path of the API's origin. A read (GET)
   * refused with 503 and a short Retry-After (a shed query, a component
   * coming back) is sent again after that wait, at most twice; writes never.
   */
  async request<T>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<Answer<T>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.requestOnce<T>(method, path, body, opts);
      } catch (e) {
        const wait = e instanceof ApiError && e.status === 503 ? e.retryAfter : undefined;
        if (method !== "GET" || attempt >= 2 || wait === undefined || wait > 5 || opts.signal?.aborted) throw e;
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      }
    }
  }

  /** requestOnce sends one HTTP request to a path of the API's origin. */
  private async requestOnce<T>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { Accept: "application/json" };
    let sent: string | null = null;
    if (opts.basic) headers.Authorization = "Basic " + base64(`${opts.basic.user}:${opts.basic.password}`);
    else if (!opts.anonymous) {
      sent = this.token();
      if (sent) headers.Authorization = "Bearer " + sent;
    }
    const form = typeof FormData !== "undefined" && body instanceof FormData;
    if (body !== undefined && !form) headers["Content-Type"] = "application/json";
    if (opts.ifMatch) headers["If-Match"] = opts.ifMatch;
    if (opts.ifNoneMatch) headers["If-None-Match"] = opts.ifNoneMatch;
    if (opts.minVersion) headers["X-Cms-Min-Version"] = String(opts.minVersion);
    let resp: Response;
    try {
      resp = await fetch(this.origin + path, {
        method,
        headers,
        body: body === undefined ? undefined : form ? (body as FormData) : JSON.stringify(body),
        signal: opts.signal,
        credentials: "omit",
        cache: "no-store",
      });
    } catch (e) {
      if (e instanceof DOMException && e.name === "AbortError") throw e;
      throw new OfflineError(e);
    }
    const etag = resp.headers.get("ETag");
    if (resp.status === 304) return { status: 304, data: undefined as T, etag };
    const text = await resp.text();
    let data: unknown = undefined;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
    }
    if (!resp.ok) {
      const problem: Problem =
        data && typeof data === "object" ? (data as Problem) : { status: resp.status, title: resp.statusText };
      const ra = Number(resp.headers.get("Retry-After"));
      if (resp.status === 401 && !opts.anonymous && !opts.basic) this.onUnauthorized?.(sent, problem.detail || problem.title);
      throw new ApiError(resp.status, problem, Number.isFinite(ra) && ra > 0 ? ra : undefined);
    }
    return { status: resp.status, data: data as T, etag };
  }
}

function base64(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  bytes.forEach((b) => (bin += String.fromCharCode(b)));
  return btoa(bin);
}
