// One job: its state, a progress bar with the time left at the rate so far,
// the log as it grows, its artifacts to download, Kill and Restart. While
// the job has not finished it is read again after each answer (pollEvery:
// closely in its first seconds, then every second); once it has, once more
// with its artifacts.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "../../api/client";
import {
  canKill, canRestart, downloadArtifact, estimate, finished, followLog, type Job, killJob, loadArtifacts, loadJob, loadLog,
  loadProgress, pollEvery, type Progress, remaining, restartJob, type StateName, type Artifact,
} from "../../data/jobs";
import { formatDateTime, formatNumber } from "../../i18n/i18n";
import { Button, Pane, Problem, Skeleton, toast } from "../../ui/ui";
import { m } from "./messages";

export const stateLabel = (s: StateName) => m(`st_${s}`);

export function jobLabel(j: Job): string {
  const kind = j.kind ? m(`k_${j.kind}`) : m("k_other", { id: j.definition });
  return m("jobLabel", { kind, id: j.id });
}

export function JobPane(p: { id: number; branch: number; onChange: () => void }) {
  const [job, setJob] = useState<Job | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [log, setLog] = useState("");
  const [artifacts, setArtifacts] = useState<Artifact[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const [acting, setActing] = useState(false);
  const logRef = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  const wasFinished = useRef<boolean | null>(null);
  // Read the job, its progress and log; again jobEvery after each answer
  // while it has not finished (a slow answer never piles up requests).
  useEffect(() => {
    const ac = new AbortController();
    const s = ac.signal;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      const j = await loadJob(p.id, s);
      // A log that cannot be read this time (none written yet, a read racing its rewrite) keeps what is shown.
      const [pr, text] = await Promise.all([loadProgress(p.id, s), loadLog(p.id, s).catch(() => null)]);
      const arts = finished(j) ? (j.artifacts ? await loadArtifacts(p.id, s) : []) : null;
      if (s.aborted) return;
      setJob(j);
      setProgress(pr);
      if (text !== null) setLog((shown) => followLog(shown, text).text);
      setArtifacts(arts);
      setError(null);
      if (wasFinished.current !== null && wasFinished.current !== finished(j)) p.onChange();
      wasFinished.current = finished(j);
      if (!finished(j)) timer = setTimeout(step, pollEvery(j, Date.now()));
    };
    const step = () => {
      load().catch((e) => {
        if (s.aborted) return;
        setError(e);
        timer = setTimeout(step, 3000);
      });
    };
    step();
    return () => {
      ac.abort();
      clearTimeout(timer);
    };
  }, [p.id, tick]);
  // Follow the log: keep it scrolled to its end unless the reader scrolled up.
  useEffect(() => {
    const el = logRef.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [log]);

  if (error !== null && !job) {
    const gone = error instanceof ApiError && error.status === 404;
    return <Pane title={m("jobs")}>{gone ? <div class="problem" role="alert">{m("notFound", { id: p.id })}</div> : <Problem error={error} />}</Pane>;
  }
  if (!job) return <Pane title={m("jobs")}><Skeleton lines={6} /></Pane>;
  const label = jobLabel(job);
  const act = async (what: "kill" | "restart") => {
    setActing(true);
    try {
      if (what === "kill") await killJob(job.id);
      else await restartJob(job.id);
      toast(m(what === "kill" ? "killed" : "restarted", { id: job.id }));
      if (what === "restart") setLog("");
      setTick((n) => n + 1);
      p.onChange();
    } catch (e) {
      toast(e instanceof ApiError && e.status === 403 ? `${m("forbidden")} ${e.message}` : e instanceof Error ? e.message : String(e), "error");
    } finally {
      setActing(false);
    }
  };
  const fraction = job.state === "succeeded" ? 1 : progress?.fraction;
  const running = !finished(job);
  const left = running ? estimate(fraction, job.started, Date.now()) : undefined;
  const eta = left === undefined ? null : remaining(left);
  return (
    <Pane title={label} label={label} class="job-pane"
      actions={<>
        {canKill(job) && <Button variant="danger" disabled={acting} onClick={() => void act("kill")}>{m("kill")}</Button>}
        {canRestart(job) && <Button disabled={acting} onClick={() => void act("restart")}>{m("restart")}</Button>}
      </>}>
      <div class="job-status">
        <span class={`job-state job-state-${job.state}`} data-state={job.state}>{stateLabel(job.state)}</span>
        {job.message && <span class="job-message">{job.message}</span>}
      </div>
      <div class="job-progress-row">
        {fraction === undefined
          ? <progress class="job-progress" aria-label={m("progress", { job: label })} />
          : <progress class="job-progress" max={100} value={Math.round(fraction * 1000) / 10} aria-label={m("progress", { job: label })}
              aria-valuetext={m("percent", { n: formatNumber(Math.floor(fraction * 100)) })} />}
        <span class="job-percent" aria-hidden="true">{fraction === undefined ? "" : m("percent", { n: formatNumber(Math.floor(fraction * 100)) })}</span>
      </div>
      <p class="job-progress-info" role="status" aria-live="polite">
        {progress?.info || (job.state !== "new" ? "" : job.startAfter ? m("scheduled", { time: formatDateTime(job.startAfter) }) : m("waiting"))}
        {eta && <span class="job-eta"> · {m("eta", { n: formatNumber(eta.n), unit: m(`eta_${eta.unit}`) })}</span>}
      </p>
      {error !== null && <Problem error={error} />}
      <dl class="props job-props">
        <dt>{m("startedBy")}</dt><dd>{job.user || "—"}</dd>
        <dt>{m("created")}</dt><dd>{formatDateTime(job.created)}</dd>
        {job.started && <><dt>{m("started")}</dt><dd>{formatDateTime(job.started)}</dd></>}
        {job.finished && <><dt>{m("finished")}</dt><dd>{formatDateTime(job.finished)}</dd></>}
        {job.restarts > 0 && <><dt>{m("restarts")}</dt><dd>{formatNumber(job.restarts)}</dd></>}
        {job.objectCount > 0 && <><dt>{m("objects")}</dt><dd>{formatNumber(job.objectCount)}</dd></>}
        {job.parameters.length > 0 && <><dt>{m("parameters")}</dt>
          <dd class="mono">{job.parameters.map((x) => `${x.name ?? ""}=${(x.values ?? []).join(",")}`).join("; ")}</dd></>}
      </dl>
      {finished(job) && (
        <section aria-labelledby="job-artifacts">
          <h2 id="job-artifacts" class="section-title">{m("artifacts")}</h2>
          {artifacts === null ? <Skeleton lines={1} /> : artifacts.length === 0 ? <p class="muted">{m("noArtifacts")}</p> : (
            <ul class="job-artifacts">
              {artifacts.map((a) => (
                <li key={a.path}>
                  <Button onClick={() => void save(job.id, a.path)} aria-label={m("download", { path: a.path })}>
                    <span class="mono">{a.path}</span>
                  </Button>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
      <h2 id="job-log-title" class="section-title">{m("log")}</h2>
      <pre ref={logRef} class="job-log" role="log" aria-label={m("logOf", { job: label })} tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
        }}>{log || m("emptyLog")}</pre>
    </Pane>
  );
}

/** save downloads an artifact with the token and hands it to the browser as a file. */
async function save(id: number, path: string) {
  try {
    const blob = await downloadArtifact(id, path);
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = path.split("/").pop() || `job-${id}`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } catch (e) {
    toast(e instanceof Error ? e.message : String(e), "error");
  }
}
