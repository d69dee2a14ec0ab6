// Jobs: the branch's queue in the rail (newest first, filtered by state in
// the address, ?state=running), the chosen job in the work area (JobPane:
// progress, estimate, log, artifacts, kill and restart), and the dialog
// that starts one (StartDialog). Loaded on demand (App); its styles are in
// the first load (App imports jobs.css: a lazy chunk's CSS is not loaded).
// Everything is the public Management API with the user's token.
import { useEffect, useState } from "preact/hooks";
import { account, adminState } from "../../auth/account";
import { finished, type Job, loadJobs, stateNames } from "../../data/jobs";
import { formatDateTime, locale } from "../../i18n/i18n";
import { useBranchAccess } from "../../live/access";
import { navigate, type Route, setQuery } from "../../router";
import { Shell } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Pane, Problem, Skeleton } from "../../ui/ui";
import { JobPane, jobLabel, stateLabel } from "./JobPane";
import { m } from "./messages";
import { StartDialog } from "./StartDialog";

/** queueEvery is how often the queue is read again while a job in it has not finished. */
const queueEvery = 2000;

export function JobsView({ route: r }: { route: Route }) {
  useStore(locale);
  const branch = Number(r.branch ?? "0");
  const admin = adminState(useStore(account)) === "yes";
  const access = useBranchAccess(r.branch ?? "");
  const filter = stateNames.find((s) => s === r.query.state);
  const [jobs, setJobs] = useState<Job[] | null>(null);
  const [next, setNext] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [reload, setReload] = useState(0);
  const [starting, setStarting] = useState(false);
  useEffect(() => {
    if (!branch) return undefined;
    const ac = new AbortController();
    setError(null);
    loadJobs(branch, filter, undefined, ac.signal).then((pg) => {
      setJobs(pg.jobs);
      setNext(pg.next);
    }, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [branch, filter, reload]);
  // While a job of the queue runs, its state changes: read the queue again.
  const busy = jobs?.some((j) => !finished(j)) ?? false;
  useEffect(() => {
    if (!busy) return undefined;
    const t = setTimeout(() => setReload((n) => n + 1), queueEvery);
    return () => clearTimeout(t);
  }, [busy, jobs]);
  const more = async () => {
    try {
      const pg = await loadJobs(branch, filter, next);
      setJobs((cur) => [...(cur ?? []), ...pg.jobs.filter((j) => !cur?.some((c) => c.id === j.id))]);
      setNext(pg.next);
    } catch (e) {
      setError(e);
    }
  };
  const open = (id: number) => navigate({ branch: r.branch, section: "jobs", job: String(id), query: r.query });
  const canStart = access.kind !== "read";

  const nav = (
    <div class="model-nav jobs-nav">
      <div class="model-nav-head">
        <h2 class="rail-title">{m("jobs")}</h2>
        {canStart && <Button variant="primary" onClick={() => setStarting(true)}>{m("start")}</Button>}
      </div>
      <div class="jobs-filter">
        <label for="jobs-state">{m("stateFilter")}</label>
        <select id="jobs-state" class="input" value={filter ?? ""} onChange={(e) => setQuery({ state: e.currentTarget.value })}>
          <option value="">{m("allStates")}</option>
          {stateNames.map((s) => <option key={s} value={s}>{stateLabel(s)}</option>)}
        </select>
        <Button variant="ghost" onClick={() => setReload((n) => n + 1)}>{m("refresh")}</Button>
      </div>
      {error !== null && <Problem error={error} />}
      {!jobs && error === null && <Skeleton lines={4} />}
      {jobs && jobs.length === 0 && <p class="muted">{filter ? m("noneInState") : m("none")}</p>}
      {jobs && jobs.length > 0 && (
        <ul class="type-nav job-nav" aria-label={m("queue")}>
          {jobs.map((j) => (
            <li key={j.id}>
              <a href={`/studio/b/${encodeURIComponent(r.branch ?? "")}/jobs/${j.id}`} aria-current={r.job === String(j.id) ? "page" : undefined}
                data-state={j.state}
                onClick={(e) => {
                  e.preventDefault();
                  open(j.id);
                }}>
                <span class="job-nav-name">{jobLabel(j)}</span>
                <span class={`job-state job-state-${j.state}`}>{stateLabel(j.state)}</span>
                <span class="job-nav-time muted">{formatDateTime(j.created)}</span>
              </a>
            </li>
          ))}
        </ul>
      )}
      {next && <Button onClick={() => void more()}>{m("more")}</Button>}
    </div>
  );

  return (
    <Shell nav={nav}>
      {r.job ? (
        <JobPane key={r.job} id={Number(r.job)} branch={branch} onChange={() => setReload((n) => n + 1)} />
      ) : (
        <Pane title={m("jobs")}>
          {jobs && jobs.length === 0 && !filter ? (
            <div class="empty-state">
              <h2>{m("emptyTitle")}</h2>
              <p>{m("empty")}</p>
              {canStart && <Button variant="primary" onClick={() => setStarting(true)}>{m("start")}</Button>}
            </div>
          ) : (
            <p class="muted">{m("choose")}</p>
          )}
        </Pane>
      )}
      {starting && (
        <StartDialog branch={branch} admin={admin} onClose={() => setStarting(false)}
          onStarted={(j) => {
            setStarting(false);
            setReload((n) => n + 1);
            open(j.id);
          }} />
      )}
    </Shell>
  );
}
