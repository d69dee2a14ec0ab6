// Operations: the state of the process serving the studio, for
// administrators: readiness, each component's ping, the indexer's lag and
// parked events, and the main counters, read from /readyz and /metrics
// (data/operations.ts) every few seconds while the view is open. Loaded
// on demand (App), so the first load does not carry its code; its styles
// are in the first load (App imports operations.css: a lazy chunk's CSS
// would not be loaded).
import { useEffect, useRef, useState } from "preact/hooks";
import { formatNumber, locale, messages } from "../../i18n/i18n";
import { type Route } from "../../router";
import { Shell } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Pane, Problem, Skeleton } from "../../ui/ui";
import { loadSnapshot, refreshEvery, requestRates, type Snapshot } from "../../data/operations";

const m = messages({
  en: {
    title: "Operations",
    refresh: "Refresh now",
    updated: "Updated {time}, every {s} s",
    ready: "This process is ready.",
    notReady: "This process is not ready: {reason}",
    noAnswer: "This process does not answer /readyz.",
    unreadable: "The metrics could not be read; trying again every {s} s.",
    components: "Components",
    up: "up",
    down: "down",
    noComponents: "This process reports no components.",
    indexer: "Indexer",
    lagEvents: "Lag (events)",
    lagSeconds: "Lag (seconds)",
    parked: "Parked events",
    parkedHint: "Parked events are missing from the index until retried: cms indexer parked, then cms indexer retry.",
    noIndexer: "This process runs no indexer; its lag is on the indexer's process.",
    traffic: "Requests",
    group: "Group",
    total: "Total",
    perSecond: "Per second",
    serverErrors: "5xx answers",
    shed: "Shed requests",
    subscribers: "Live subscribers",
    jobsPending: "Jobs pending",
    jobsRunning: "Jobs running here",
    unknown: "not known",
  },
  de: {
    title: "Betrieb",
    refresh: "Jetzt aktualisieren",
    updated: "Aktualisiert {time}, alle {s} s",
    ready: "Dieser Prozess ist bereit.",
    notReady: "Dieser Prozess ist nicht bereit: {reason}",
    noAnswer: "Dieser Prozess antwortet nicht auf /readyz.",
    unreadable: "Die Metriken konnten nicht gelesen werden; neuer Versuch alle {s} s.",
    components: "Komponenten",
    up: "erreichbar",
    down: "ausgefallen",
    noComponents: "Dieser Prozess meldet keine Komponenten.",
    indexer: "Indexer",
    lagEvents: "Rückstand (Ereignisse)",
    lagSeconds: "Rückstand (Sekunden)",
    parked: "Geparkte Ereignisse",
    parkedHint: "Geparkte Ereignisse fehlen im Index, bis sie erneut angewendet werden: cms indexer parked, dann cms indexer retry.",
    noIndexer: "Dieser Prozess führt keinen Indexer aus; dessen Rückstand zeigt der Prozess des Indexers.",
    traffic: "Anfragen",
    group: "Gruppe",
    total: "Gesamt",
    perSecond: "Pro Sekunde",
    serverErrors: "5xx-Antworten",
    shed: "Abgewiesene Anfragen (Überlast)",
    subscribers: "Live-Abonnenten",
    jobsPending: "Offene Jobs",
    jobsRunning: "Hier laufende Jobs",
    unknown: "unbekannt",
  },
});

/** useSnapshots reads the process's state now and every refreshEvery ms while mounted; refresh reads at once. */
function useSnapshots() {
  const [cur, setCur] = useState<{ snap: Snapshot; prev: Snapshot | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const last = useRef<Snapshot | null>(null);
  useEffect(() => {
    const ac = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () => {
      loadSnapshot(location.origin, ac.signal).then(
        (snap) => {
          setCur({ snap, prev: last.current });
          last.current = snap;
          setError(null);
        },
        (e: unknown) => !ac.signal.aborted && setError(e),
      ).finally(() => {
        if (!ac.signal.aborted) timer = setTimeout(read, refreshEvery);
      });
    };
    read();
    return () => {
      ac.abort();
      clearTimeout(timer);
    };
  }, [tick]);
  return { cur, error, refresh: () => setTick((t) => t + 1) };
}

export function OperationsView(_: { route: Route }) {
  useStore(locale);
  const { cur, error, refresh } = useSnapshots();
  const s = cur?.snap;
  const secs = refreshEvery / 1000;
  const num = (n: number | undefined, digits = 0) =>
    n === undefined ? m("unknown") : digits ? new Intl.NumberFormat(locale.get(), { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(n) : formatNumber(n);
  const rates = s ? requestRates(cur.prev, s) : {};
  const actions = (
    <>
      {s && <span class="muted small">{m("updated", { time: new Date(s.at).toLocaleTimeString(locale.get()), s: secs })}</span>}
      <Button onClick={refresh}>{m("refresh")}</Button>
    </>
  );
  return (
    <Shell>
      <Pane title={m("title")} label={m("title")} actions={actions} class="ops">
        {error !== null && (
          <div class="ops-state ops-bad" role="alert">
            <p>{m("unreadable", { s: secs })}</p>
            <Problem error={error} />
          </div>
        )}
        {!s && error === null && <Skeleton lines={8} />}
        {s && (
          <>
            <p class={`ops-state${s.readiness?.ready ? "" : " ops-bad"}`} role="status" data-ready={String(!!s.readiness?.ready)}>
              {!s.readiness ? m("noAnswer") : s.readiness.ready ? m("ready") : m("notReady", { reason: s.readiness.reason ?? "" })}
            </p>
            <h2 class="section-title" id="ops-components">{m("components")}</h2>
            {s.components.length === 0 && <p class="muted">{m("noComponents")}</p>}
            <ul class="ops-components" aria-labelledby="ops-components">
              {s.components.map((c) => (
                <li key={c.name} class={`ops-component${c.up ? "" : " ops-down"}`} data-component={c.name} data-up={String(c.up)}>
                  <span class="ops-name">{c.name}</span>
                  <span class="ops-up-text">{c.up ? m("up") : m("down")}</span>
                </li>
              ))}
            </ul>
            <h2 class="section-title">{m("indexer")}</h2>
            {s.lag ? (
              <dl class="ops-figures" aria-label={m("indexer")}>
                <div data-figure="lag-events"><dt>{m("lagEvents")}</dt><dd>{num(s.lag.events)}</dd></div>
                <div data-figure="lag-seconds"><dt>{m("lagSeconds")}</dt><dd>{num(s.lag.seconds, 1)}</dd></div>
                <div data-figure="parked" class={s.parked ? "ops-warn" : ""}><dt>{m("parked")}</dt><dd>{num(s.parked)}</dd></div>
              </dl>
            ) : (
              <p class="muted">{m("noIndexer")}</p>
            )}
            {!!s.parked && <p class="notice">{m("parkedHint")}</p>}
            <h2 class="section-title" id="ops-traffic">{m("traffic")}</h2>
            <dl class="ops-figures" aria-label={m("traffic")}>
              <div data-figure="5xx" class={s.serverErrors ? "ops-warn" : ""}><dt>{m("serverErrors")}</dt><dd>{num(s.serverErrors)}</dd></div>
              <div data-figure="shed" class={s.shed ? "ops-warn" : ""}><dt>{m("shed")}</dt><dd>{num(s.shed)}</dd></div>
              <div data-figure="subscribers"><dt>{m("subscribers")}</dt><dd>{num(s.subscribers)}</dd></div>
              <div data-figure="jobs-pending"><dt>{m("jobsPending")}</dt><dd>{num(s.jobs?.pending)}</dd></div>
              <div data-figure="jobs-running"><dt>{m("jobsRunning")}</dt><dd>{num(s.jobs?.running)}</dd></div>
            </dl>
            <table class="attr-table ops-table" aria-labelledby="ops-traffic">
              <thead>
                <tr><th scope="col">{m("group")}</th><th scope="col" class="num">{m("total")}</th><th scope="col" class="num">{m("perSecond")}</th></tr>
              </thead>
              <tbody>
                {Object.keys(s.requests).sort().map((g) => (
                  <tr key={g} data-group={g}>
                    <th scope="row">{g}</th>
                    <td data-total={String(s.requests[g] ?? 0)}>{num(s.requests[g])}</td>
                    <td>{num(rates[g], 1)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Pane>
    </Shell>
  );
}
