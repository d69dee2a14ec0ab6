// Jobs through the Management API (docs/jobs.md): the built-in definitions
// the studio starts (exports of a selection or a type, an import from a file
// sent as job input, re-indexing and clean-up for administrators), the queue
// of a branch (GetJobs, newest first, by state), one job's state, progress,
// log and artifacts, kill and restart (PATCH state 0 / 1). The rules the
// screen follows (what may be killed or restarted, the estimate, the log
// growing, the ids typed for a selection) are here, unit-tested; the calls
// are thin.
import type { CmsJob, CreateJobRequest, JobParameter } from "../api/generated/management";
import { ApiError, OfflineError } from "../api/client";
import { api, session } from "../auth/session";

/** The built-in job definitions (bootstrapped on branch 4, pkg/jobs). */
export const Kind = {
  exportJson: 1200,
  exportCsv: 1201,
  importJson: 1202,
  reindex: 1203,
  cleanupFiles: 1204,
  promoteRelease: 1205,
} as const;

export type KindName = keyof typeof Kind;

/** kindOf names a built-in definition by its id (undefined: a definition of one's own). */
export function kindOf(definition: number): KindName | undefined {
  return (Object.keys(Kind) as KindName[]).find((k) => Kind[k] === definition);
}

/** adminKinds act on the whole installation: only administrators start them. */
export const adminKinds: readonly KindName[] = ["reindex", "cleanupFiles"];

/** startable are the kinds the studio starts, for an administrator or not. */
export function startable(admin: boolean): KindName[] {
  const all: KindName[] = ["exportJson", "exportCsv", "importJson", "reindex", "cleanupFiles"];
  return admin ? all : all.filter((k) => !adminKinds.includes(k));
}

/** JobState as GetJobs and CmsJob.state say it. */
export const State = { new: 0, running: 1, succeeded: 2, error: 3 } as const;
export type StateName = keyof typeof State;
export const stateNames: readonly StateName[] = ["new", "running", "succeeded", "error"];

export function stateName(s: number): StateName {
  return stateNames[s] ?? (s === 4 ? "running" : "new");
}

/** A job as the screen shows it. */
export interface Job {
  id: number;
  branch: number;
  definition: number;
  kind: KindName | undefined;
  state: StateName;
  message: string;
  created: string;
  started: string;
  finished: string;
  /** A scheduled job (a release) waits in the queue until then. */
  startAfter: string;
  user: string;
  restarts: number;
  artifacts: boolean;
  objectCount: number;
  parameters: JobParameter[];
}

export function parseJob(j: CmsJob): Job {
  const definition = j.definitionRef ?? 0;
  const state = stateName(j.state ?? 0);
  // The runner's message for a plain success is the state's own name ("succeeded"): the badge says it already, in
  // the user's language; any other message (an error, "killed by …") is shown.
  const message = j.stateMessage ?? "";
  return {
    id: j.id ?? 0,
    branch: j.branchRef ?? 0,
    definition,
    kind: kindOf(definition),
    state,
    message: message === state ? "" : message,
    created: j.created ?? "",
    started: j.started ?? "",
    finished: j.finished ?? "",
    startAfter: j.startAfter ?? "",
    user: j.user ?? "",
    restarts: j.restarts ?? 0,
    artifacts: j.artifacts === true,
    objectCount: j.objectCount ?? 0,
    parameters: j.parameters ?? [],
  };
}

/** finished: the job ended (no more progress or log will come). */
export const finished = (j: Job) => j.state === "succeeded" || j.state === "error";
/** canKill: a New or Running job can be killed (PATCH state 0). */
export const canKill = (j: Job) => j.state === "new" || j.state === "running";
/** canRestart: a Succeeded or Error job can be restarted (PATCH state 1). */
export const canRestart = (j: Job) => finished(j);

/**
 * pollEvery is how long until a job that has not finished is read again:
 * closely (250 ms: the runner stores progress and log that often) in the
 * first 5 s since it started (or was created), where a short job does all
 * its work, then every second.
 */
export function pollEvery(j: Job, now: number): number {
  const t0 = Date.parse(j.started || j.created);
  return Number.isNaN(t0) || now - t0 < 5000 ? 250 : 1000;
}

/**
 * estimate is the time left (ms) from the rate so far: progress p reached
 * in the time since the job started, the rest at the same rate. Undefined
 * before there is a rate (no start, no progress yet) and once done.
 */
export function estimate(progress: number | undefined, started: string, now: number): number | undefined {
  const t0 = Date.parse(started);
  if (progress === undefined || !(progress > 0) || progress >= 1 || Number.isNaN(t0)) return undefined;
  const elapsed = now - t0;
  if (elapsed <= 0) return undefined;
  return (elapsed / progress) * (1 - progress);
}

/** remaining says an estimate in words' numbers: seconds below two minutes, else minutes, else hours. */
export function remaining(ms: number): { unit: "s" | "min" | "h"; n: number } {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 120) return { unit: "s", n: s };
  const min = Math.ceil(s / 60);
  if (min < 120) return { unit: "min", n: min };
  return { unit: "h", n: Math.ceil(min / 60) };
}

/**
 * followLog takes the log as read now and what is shown: the new text when
 * the log grew (the shown text is its start); what is shown when the read
 * is only a start of it (a stale read: a log never shrinks while its job
 * runs); else the whole log (it was replaced: a restart starts a new one).
 */
export function followLog(shown: string, now: string): { text: string; added: string; replaced: boolean } {
  if (now.startsWith(shown)) return { text: now, added: now.slice(shown.length), replaced: false };
  if (shown.startsWith(now)) return { text: shown, added: "", replaced: false };
  return { text: now, added: now, replaced: true };
}

/** maxSelection is the most objIds a job takes (POST /jobs, 413 beyond). */
export const maxSelection = 10_000;

/**
 * parseIds reads the ids of a selection as typed or pasted: numbers
 * separated by commas, spaces or lines, duplicates dropped, in order.
 * Anything else is named (bad), as is a selection beyond maxSelection.
 */
export function parseIds(text: string): { ids: number[]; bad: string[]; tooMany: boolean } {
  const ids: number[] = [];
  const bad: string[] = [];
  const seen = new Set<number>();
  for (const part of text.split(/[\s,;]+/)) {
    if (!part) continue;
    const n = Number(part);
    if (!/^\d+$/.test(part) || !Number.isSafeInteger(n) || n <= 0 || n > 2147483647) {
      if (bad.length < 5) bad.push(part);
      continue;
    }
    if (!seen.has(n)) {
      seen.add(n);
      ids.push(n);
    }
  }
  return { ids, bad, tooMany: ids.length > maxSelection };
}

/** What the start dialog asks for. */
export interface StartSpec {
  kind: KindName;
  branch: number;
  /** Exports: the selection (objIds), else every object of the type. */
  ids?: number[];
  type?: string;
  /** Import: the job input's token and the file's name; objects per transaction. */
  input?: { token: string; name: string };
  batchSize?: number;
  /** Re-index: the branch (and its descendants) to re-index in place; none = a new index of everything. */
  reindexBranch?: number;
  /** Clean-up: report only; keep files younger than minAge (Go duration). */
  dryRun?: boolean;
  minAge?: string;
  /** The job's language (201 English, 202 German): its uiCulture. */
  language?: number;
}

/** createRequest is the POST /jobs body of a start. */
export function createRequest(s: StartSpec): CreateJobRequest {
  const parameters: JobParameter[] = [];
  const req: CreateJobRequest = { branchId: s.branch, jobDefinitionId: Kind[s.kind] };
  if (s.language) req.language = s.language;
  if (s.kind === "exportJson" || s.kind === "exportCsv") {
    if (s.ids && s.ids.length > 0) req.objIds = s.ids;
    else if (s.type) parameters.push({ name: "type", values: [s.type] });
  }
  if (s.kind === "importJson") {
    if (s.input) req.inputFile = { token: s.input.token, name: s.input.name };
    if (s.batchSize) parameters.push({ name: "batchSize", values: [String(s.batchSize)] });
  }
  if (s.kind === "reindex" && s.reindexBranch) parameters.push({ name: "branch", values: [String(s.reindexBranch)] });
  if (s.kind === "cleanupFiles") {
    if (s.dryRun) parameters.push({ name: "dryRun", values: ["true"] });
    if (s.minAge) parameters.push({ name: "minAge", values: [s.minAge] });
  }
  if (parameters.length > 0) req.parameters = parameters;
  return req;
}

/** startJob starts a job and returns it (state New). */
export async function startJob(s: StartSpec): Promise<Job> {
  const { data } = await api.call("management", "CreateJob", {}, createRequest(s));
  return parseJob(data);
}

/** takeJobs is the queue's page size. */
export const takeJobs = 100;

export interface JobPage {
  jobs: Job[];
  next: string | undefined;
}

/** loadJobs reads a page of a branch's queue, newest first, of one state or all. */
export async function loadJobs(branch: number, state: StateName | undefined, cont: string | undefined, signal?: AbortSignal): Promise<JobPage> {
  const { data } = await api.call("management", "GetJobs", {
    branchId: branch, state: state === undefined ? undefined : State[state], isDeleted: false, take: takeJobs, continue: cont,
  }, undefined, { signal });
  return { jobs: (data.cmsJobs ?? []).map(parseJob), next: data.continue || undefined };
}

export async function loadJob(id: number, signal?: AbortSignal): Promise<Job> {
  const { data } = await api.call("management", "GetJob", { jobId: id }, undefined, { signal });
  return parseJob(data);
}

export interface Progress {
  /** 0..1, undefined when the job says no fraction (an export of a type counts objects only). */
  fraction: number | undefined;
  info: string;
}

export async function loadProgress(id: number, signal?: AbortSignal): Promise<Progress> {
  const { data } = await api.call("management", "GetJobProgress", { jobId: id }, undefined, { signal });
  const p = data.progress;
  return { fraction: typeof p === "number" && Number.isFinite(p) ? Math.min(1, Math.max(0, p)) : undefined, info: data.progressInfo ?? "" };
}

/** loadLog reads the job's log as written so far (bytes, read as UTF-8 text). */
export async function loadLog(id: number, signal?: AbortSignal): Promise<string> {
  const b = await api.blob("management", "GetJobLogs", { jobId: id }, { signal });
  return b.text();
}

export interface Artifact {
  path: string;
}

export async function loadArtifacts(id: number, signal?: AbortSignal): Promise<Artifact[]> {
  const { data } = await api.call("management", "GetJobArtifacts", { jobId: id }, undefined, { signal });
  return (data.files ?? []).filter((f) => !!f.path).map((f) => ({ path: f.path ?? "" }));
}

/** downloadArtifact reads an artifact with the token (a link cannot send it) as a Blob to save. */
export function downloadArtifact(id: number, path: string): Promise<Blob> {
  return api.blob("management", "GetJobArtifact", { jobId: id, path });
}

/** killJob asks a New or Running job to stop (it ends as Error, "killed by …"). */
export async function killJob(id: number): Promise<void> {
  await api.call("management", "UpdateJob", { jobId: id }, { state: 0 });
}

/** restartJob queues a finished job again (restarts + 1). */
export async function restartJob(id: number): Promise<void> {
  await api.call("management", "UpdateJob", { jobId: id }, { state: 1 });
}

/** inputChunk is how much of a file one job input request carries (the server's maxUploadBytes is 512 MiB). */
export const inputChunk = 8 << 20;

export interface Uploader {
  (url: string, chunk: Blob, name: string): Promise<{ token: string; size: number }>;
}

/**
 * uploadInput sends a file as job input, slice by slice (POST /jobInput,
 * then POST /jobInput/{token} per further slice: the tab never holds more
 * than one slice), and returns its token. A failed slice cancels the input
 * (DELETE /jobInput/{token}) before the error is passed on.
 */
export async function uploadInput(file: Blob, name: string, onProgress?: (sent: number) => void, send: Uploader = postChunk,
  chunk = inputChunk): Promise<string> {
  let token = "";
  for (let at = 0; at < file.size || at === 0; at += chunk) {
    const part = file.slice(at, Math.min(file.size, at + chunk));
    try {
      const res = await send(token ? `/apis/cms/v1/jobInput/${encodeURIComponent(token)}` : "/apis/cms/v1/jobInput", part, name);
      token = res.token;
    } catch (e) {
      if (token) await api.call("management", "JobInputCancel", { token }).catch(() => undefined);
      throw e;
    }
    onProgress?.(Math.min(file.size, at + chunk));
    if (file.size === 0) break;
  }
  return token;
}

/** postChunk sends one multipart request (field "file") with the session's token. */
async function postChunk(url: string, chunk: Blob, name: string): Promise<{ token: string; size: number }> {
  const form = new FormData();
  form.append("file", chunk, name);
  const headers: Record<string, string> = { Accept: "application/json" };
  const t = session.get()?.token;
  if (t) headers.Authorization = "Bearer " + t;
  let resp: Response;
  try {
    resp = await fetch(location.origin + url, { method: "POST", body: form, headers, credentials: "omit" });
  } catch (e) {
    throw new OfflineError(e);
  }
  const text = await resp.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = {};
  }
  if (!resp.ok) {
    const problem = data && typeof data === "object" ? (data as Record<string, unknown>) : {};
    if (resp.status === 401) api.onUnauthorized?.(t ?? null, String(problem.detail ?? ""));
    throw new ApiError(resp.status, { status: resp.status, title: resp.statusText, ...problem }, undefined);
  }
  const d = data as { token?: string; size?: number };
  if (!d.token) throw new Error("the API answered no job input token");
  return { token: d.token, size: d.size ?? 0 };
}
