// The top bar's live indicator: the change stream's state (live,
// reconnecting, offline) and, on click, the activity popover "recent
// changes by others": who changed which object, when; a click opens the
// object. It keeps the branch's stream open while the studio shows the
// branch (src/live/changes.ts shares it with every view).
import { useEffect, useRef, useState } from "preact/hooks";
import { locale, messages } from "../i18n/i18n";
import { navigate, route } from "../router";
import { useStore } from "../store";
import { Avatar, Button } from "../ui/ui";
import { ago, others, refsOf, userName, type ObjectRef } from "./activity";
import { liveStore, subscribe, type LiveChange, type LiveState } from "./changes";
import "./live.css";

const m = messages({
  en: {
    live: "Live",
    connecting: "Connecting…",
    reconnecting: "Reconnecting…",
    offline: "Offline",
    liveHint: "Changes by others appear here within a second of their save.",
    connectingHint: "Opening the change stream…",
    reconnectingHint: "The connection to the change stream dropped; trying again. Nothing is missed.",
    offlineHint: "No connection to the change stream. Changes by others show again once it is back.",
    title: "Recent changes by others",
    empty: "No changes by others since you opened the studio.",
    created: "{user} created {object}",
    updated: "{user} changed {object}",
    deleted: "{user} deleted {object}",
    comment: "{user} commented on {object}",
    branchDeleted: "{user} deleted a branch",
    someone: "Someone",
    more: "{object} and {n} more",
    now: "just now",
    minute: "{n} min ago",
    hour: "{n} h ago",
    day: "{n} d ago",
    open: "Open {object}",
    newCount: "new",
    indicator: "Live updates:",
    close: "Close",
  },
  de: {
    live: "Live",
    connecting: "Verbinde…",
    reconnecting: "Verbinde neu…",
    offline: "Offline",
    liveHint: "Änderungen anderer erscheinen hier binnen einer Sekunde nach dem Speichern.",
    connectingHint: "Der Änderungsstrom wird geöffnet…",
    reconnectingHint: "Die Verbindung zum Änderungsstrom ist abgebrochen; neuer Versuch. Nichts geht verloren.",
    offlineHint: "Keine Verbindung zum Änderungsstrom. Änderungen anderer erscheinen wieder, sobald sie besteht.",
    title: "Letzte Änderungen anderer",
    empty: "Keine Änderungen anderer, seit Sie das Studio geöffnet haben.",
    created: "{user} hat {object} angelegt",
    updated: "{user} hat {object} geändert",
    deleted: "{user} hat {object} gelöscht",
    comment: "{user} hat {object} kommentiert",
    branchDeleted: "{user} hat einen Branch gelöscht",
    someone: "Jemand",
    more: "{object} und {n} weitere",
    now: "gerade eben",
    minute: "vor {n} Min.",
    hour: "vor {n} Std.",
    day: "vor {n} T.",
    open: "{object} öffnen",
    newCount: "neu",
    indicator: "Live-Aktualisierung:",
    close: "Schließen",
  },
});

const kindKeys = ["created", "updated", "deleted", "comment", "branchDeleted"] as const;
type KindKey = (typeof kindKeys)[number];

/** changeText is "<user> changed <object>" in the studio's language. */
export function changeText(c: LiveChange, refs: ObjectRef[], user = c.user): string {
  const kind: KindKey = (kindKeys as readonly string[]).includes(c.kind) ? (c.kind as KindKey) : "updated";
  const first = refs[0]?.name ?? (c.objectIds[0] !== undefined ? `#${c.objectIds[0]}` : "");
  const rest = c.objectIds.length - 1;
  const object = rest > 0 ? m("more", { object: first, n: rest }) : first;
  return m(kind, { user: user || m("someone"), object });
}

function agoText(at: number, now: number): string {
  const a = ago(at, now);
  return a.unit === "now" ? m("now") : m(a.unit, { n: a.n });
}

const stateHint: Record<LiveState, "liveHint" | "connectingHint" | "reconnectingHint" | "offlineHint"> = {
  live: "liveHint", connecting: "connectingHint", reconnecting: "reconnectingHint", offline: "offlineHint",
};

export function LiveIndicator() {
  const r = useStore(route);
  const branch = r.branch;
  if (!branch) return null;
  return <Indicator key={branch} branch={branch} />;
}

function Indicator({ branch }: { branch: string }) {
  const live = useStore(liveStore(branch));
  useStore(locale);
  const [open, setOpen] = useState(false);
  const [seen, setSeen] = useState(0);
  const [now, setNow] = useState(Date.now());
  const button = useRef<HTMLButtonElement>(null);
  const pop = useRef<HTMLDivElement>(null);
  useEffect(() => subscribe(branch, () => {}), [branch]); // keep the stream open while the branch is shown
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);
  const list = others(live.changes);
  const newest = list[0]?.version ?? 0;
  useEffect(() => {
    if (open) setSeen(newest);
  }, [open, newest]);
  useEffect(() => {
    if (!open) return undefined;
    setNow(Date.now());
    pop.current?.focus();
    const onDown = (e: MouseEvent) => {
      const t = e.target as Node;
      if (!pop.current?.contains(t) && !button.current?.contains(t)) setOpen(false);
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [open]);
  const close = () => {
    setOpen(false);
    button.current?.focus();
  };
  const unseen = list.filter((c) => c.version > seen).length;
  const state = m(live.state);
  return (
    <div class="live">
      <button ref={button} type="button" class={`live-indicator live-${live.state}`} aria-expanded={open} aria-haspopup="dialog"
        aria-controls="live-activity" title={m(stateHint[live.state])} onClick={() => (open ? close() : setOpen(true))}>
        <span class="live-dot" aria-hidden="true" />
        <span class="visually-hidden">{m("indicator")} </span>
        <span>{state}</span>
        {unseen > 0 && (
          <span class="live-badge">
            <span class="visually-hidden">, </span>
            {unseen}
            <span class="visually-hidden"> {m("newCount")}</span>
          </span>
        )}
      </button>
      {open && (
        <div ref={pop} id="live-activity" class="live-popover" role="dialog" aria-label={m("title")} tabIndex={-1}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.stopPropagation();
              close();
            }
          }}>
          <header class="live-head">
            <h2>{m("title")}</h2>
            <Button variant="ghost" aria-label={m("close")} onClick={close}>×</Button>
          </header>
          <p class={`live-state live-state-${live.state}`}>
            <span class="live-dot" aria-hidden="true" /> {m(stateHint[live.state])}
            {live.problem && live.state !== "live" ? ` (${live.problem})` : ""}
          </p>
          {list.length === 0 ? (
            <p class="live-empty">{m("empty")}</p>
          ) : (
            <ul class="live-list" aria-live="polite">
              {list.map((c) => (
                <ChangeRow key={c.version} branch={branch} change={c} now={now} onOpen={() => setOpen(false)} />
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

function ChangeRow(props: { branch: string; change: LiveChange; now: number; onOpen: () => void }) {
  const { branch, change: c } = props;
  const l = useStore(locale);
  const [refs, setRefs] = useState<ObjectRef[] | null>(null);
  const [user, setUser] = useState(c.user);
  useEffect(() => {
    let alive = true;
    const preferred = l === "de" ? [202, 201] : [201, 202];
    void Promise.all([refsOf(branch, c, preferred), userName(c.user, preferred)]).then(([x, u]) => {
      if (!alive) return;
      setRefs(x);
      setUser(u);
    });
    return () => {
      alive = false;
    };
  }, [branch, c.version, l]);
  const text = changeText(c, refs ?? [], user);
  const target = refs?.find((x) => x.type > 0);
  const when = agoText(c.at, props.now);
  const body = (
    <>
      <Avatar name={user || "?"} title={c.user} />
      <span class="live-text">{text}</span>
      <time class="live-time" dateTime={new Date(c.at).toISOString()}>{when}</time>
    </>
  );
  return (
    <li class="live-item" data-version={c.version}>
      {target && c.kind !== "deleted" ? (
        <button type="button" class="live-row" title={m("open", { object: target.name })} onClick={() => {
          props.onOpen();
          navigate({ branch, section: "content", type: String(target.type), object: String(target.id), query: {} });
        }}>
          {body}
        </button>
      ) : (
        <div class={`live-row ${refs ? "" : "live-loading"}`}>{body}</div>
      )}
    </li>
  );
}
