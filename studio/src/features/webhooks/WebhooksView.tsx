// Webhooks (administrators): the definitions in the rail, the chosen one
// with its settings, a test delivery and its delivery log in the work area;
// a new webhook's secret is shown once, right after it was created.
import { useEffect, useRef, useState } from "preact/hooks";
import { account } from "../../auth/account";
import { loadBranches, type BranchNode } from "../../data/branches";
import { loadTypes, type TypeInfo } from "../../data/types";
import {
  deleteWebhook, formatDuration, loadAttempts, loadWebhooks, mergePage, sendTest, type Attempt, type Webhook,
} from "../../data/webhooks";
import { formatDateTime, locale, messages } from "../../i18n/i18n";
import { navigate, type Route } from "../../router";
import { Shell, uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Dialog, Pane, Problem, Skeleton, toast } from "../../ui/ui";
import { kindLabel, WebhookDialog } from "./WebhookDialog";
// webhooks.css is in the first load (CodeView imports it); importing it here too made esbuild emit an empty JS chunk for it.

const m = messages({
  en: {
    webhooks: "Webhooks", newWebhook: "New webhook", none: "No webhooks yet.", choose: "Choose a webhook to see its deliveries, or create one.",
    emptyTitle: "Send changes to your systems",
    empty: "A webhook POSTs every change that matches its filters to a URL of yours, signed with its secret.",
    adminsOnly: "Only administrators manage webhooks.", checking: "Checking your permission…", notFound: "There is no webhook {id}.",
    unnamed: "Webhook {id}", edit: "Edit", del: "Delete", test: "Send test delivery", testing: "Sending…",
    url: "Receiver URL", state: "State", on: "Enabled", off: "Disabled", branches: "Branches", types: "Types", kinds: "Kinds", all: "all",
    secretTitle: "The webhook's secret", secretText: "Copy the secret now and keep it with the receiver: it is shown only this once. It signs every delivery (X-Cms-Signature); the API never returns it.",
    secretLabel: "Secret", copy: "Copy", copied: "Secret copied.", copyFailed: "Copying was refused: select the secret and copy it.", secretDone: "I have saved the secret",
    log: "Delivery log", refresh: "Refresh", more: "Show older attempts", noAttempts: "No delivery attempts yet.",
    time: "Time", kind: "Event", attempt: "Attempt", status: "Status", duration: "Duration", outcome: "Outcome", error: "Error",
    noResponse: "no response", test_kind: "test",
    out_accepted: "accepted", "out_failed": "failed, retried", out_test_failed: "failed (a test is not retried)", "out_gave-up": "given up", "out_refused-address": "address refused",
    testSent: "Test delivery: {outcome}, status {status}, {duration}.", testFailed: "Test delivery failed: {error}",
    delTitle: "Delete the webhook?", delText: "“{name}” stops receiving changes at once. Its delivery log stays readable until it is pruned.",
    delConfirm: "Delete webhook", cancel: "Cancel", deleted: "Webhook deleted.",
  },
  de: {
    webhooks: "Webhooks", newWebhook: "Neuer Webhook", none: "Noch keine Webhooks.", choose: "Wählen Sie einen Webhook, um seine Zustellungen zu sehen, oder legen Sie einen an.",
    emptyTitle: "Änderungen an Ihre Systeme senden",
    empty: "Ein Webhook sendet jede Änderung, die zu seinen Filtern passt, per POST an eine URL von Ihnen, signiert mit seinem Geheimnis.",
    adminsOnly: "Nur Administratoren verwalten Webhooks.", checking: "Ihre Berechtigung wird geprüft…", notFound: "Es gibt keinen Webhook {id}.",
    unnamed: "Webhook {id}", edit: "Bearbeiten", del: "Löschen", test: "Testzustellung senden", testing: "Wird gesendet…",
    url: "Empfänger-URL", state: "Zustand", on: "Aktiv", off: "Inaktiv", branches: "Branches", types: "Typen", kinds: "Arten", all: "alle",
    secretTitle: "Das Geheimnis des Webhooks", secretText: "Kopieren Sie das Geheimnis jetzt und hinterlegen Sie es beim Empfänger: Es wird nur dieses eine Mal angezeigt. Es signiert jede Zustellung (X-Cms-Signature); die API gibt es nie zurück.",
    secretLabel: "Geheimnis", copy: "Kopieren", copied: "Geheimnis kopiert.", copyFailed: "Kopieren wurde verweigert: Markieren und kopieren Sie das Geheimnis.", secretDone: "Ich habe das Geheimnis gespeichert",
    log: "Zustellprotokoll", refresh: "Aktualisieren", more: "Ältere Versuche zeigen", noAttempts: "Noch keine Zustellversuche.",
    time: "Zeit", kind: "Ereignis", attempt: "Versuch", status: "Status", duration: "Dauer", outcome: "Ergebnis", error: "Fehler",
    noResponse: "keine Antwort", test_kind: "Test",
    out_accepted: "angenommen", "out_failed": "fehlgeschlagen, wird wiederholt", out_test_failed: "fehlgeschlagen (ein Test wird nicht wiederholt)", "out_gave-up": "aufgegeben", "out_refused-address": "Adresse abgelehnt",
    testSent: "Testzustellung: {outcome}, Status {status}, {duration}.", testFailed: "Testzustellung fehlgeschlagen: {error}",
    delTitle: "Webhook löschen?", delText: "„{name}“ erhält ab sofort keine Änderungen mehr. Sein Zustellprotokoll bleibt lesbar, bis es bereinigt wird.",
    delConfirm: "Webhook löschen", cancel: "Abbrechen", deleted: "Webhook gelöscht.",
  },
});

const outcomeLabel = (o: string, test = false) =>
  test && o === "failed" ? m("out_test_failed")
    : ["accepted", "failed", "gave-up", "refused-address"].includes(o) ? m(`out_${o}` as "out_accepted") : o;

const num = (n: number, digits: number) =>
  new Intl.NumberFormat(locale.get(), { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n);

export const duration = (ms: number) => formatDuration(ms, num);

export function WebhooksView({ route: r }: { route: Route }) {
  const l = useStore(locale);
  const acc = useStore(account);
  const pref = uiLanguages(l);
  const [hooks, setHooks] = useState<Webhook[] | null>(null);
  const [branches, setBranches] = useState<BranchNode[]>([]);
  const [types, setTypes] = useState<TypeInfo[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [reload, setReload] = useState(0);
  const [editing, setEditing] = useState<Webhook | "new" | null>(null);
  // The secret of the webhook just created: in memory only, shown once.
  const [fresh, setFresh] = useState<{ id: number; secret: string } | null>(null);
  const allowed = acc?.admin === true;
  useEffect(() => {
    if (!allowed) return;
    const ac = new AbortController();
    setError(null);
    loadWebhooks(pref, ac.signal).then(setHooks, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [allowed, l, reload]);
  useEffect(() => {
    if (!allowed) return;
    const ac = new AbortController();
    loadBranches(pref, ac.signal).then(setBranches, () => {});
    if (r.branch) loadTypes(r.branch, pref, ac.signal).then(setTypes, () => {});
    return () => ac.abort();
  }, [allowed, l, r.branch]);
  const current = hooks?.find((h) => String(h.id) === r.webhook);
  useEffect(() => {
    if (fresh && r.webhook !== String(fresh.id)) setFresh(null); // left the new webhook: its secret is gone
  }, [r.webhook]);
  const open = (id: number) => navigate({ branch: r.branch, section: "webhooks", webhook: String(id), query: {} });
  const label = (h: Webhook) => h.name || m("unnamed", { id: h.id });

  if (!allowed) {
    return (
      <Shell>
        <Pane title={m("webhooks")}>
          {acc === null ? <p class="muted">{m("checking")}</p> : <div class="problem" role="alert">{m("adminsOnly")}</div>}
        </Pane>
      </Shell>
    );
  }

  const nav = (
    <div class="model-nav">
      <div class="model-nav-head">
        <h2 class="rail-title">{m("webhooks")}</h2>
        <Button variant="primary" onClick={() => setEditing("new")} disabled={!hooks}>{m("newWebhook")}</Button>
      </div>
      {error !== null && <Problem error={error} />}
      {!hooks && error === null && <Skeleton lines={4} />}
      {hooks && hooks.length === 0 && <p class="muted">{m("none")}</p>}
      {hooks && (
        <ul class="type-nav webhook-nav" aria-label={m("webhooks")}>
          {hooks.map((h) => (
            <li key={h.id}>
              <a href={`/studio/b/${encodeURIComponent(r.branch ?? "")}/webhooks/${h.id}`} aria-current={current?.id === h.id ? "page" : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  open(h.id);
                }}>
                <span class={`dot ${h.enabled ? "dot-on" : "dot-off"}`} aria-hidden="true" />
                {label(h)}
                <span class="visually-hidden">, {h.enabled ? m("on") : m("off")}</span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );

  return (
    <Shell nav={nav}>
      {current ? (
        <WebhookPane key={current.id} webhook={current} label={label(current)} branches={branches} types={types}
          secret={fresh?.id === current.id ? fresh.secret : undefined} onSecretDone={() => setFresh(null)}
          onEdit={() => setEditing(current)}
          onDeleted={() => {
            setReload((n) => n + 1);
            navigate({ branch: r.branch, section: "webhooks", query: {} });
          }} />
      ) : (
        <Pane title={m("webhooks")}>
          {hooks && r.webhook && <div class="problem" role="alert">{m("notFound", { id: r.webhook })}</div>}
          {hooks && hooks.length === 0 ? (
            <div class="empty-state">
              <h2>{m("emptyTitle")}</h2>
              <p>{m("empty")}</p>
              <Button variant="primary" onClick={() => setEditing("new")}>{m("newWebhook")}</Button>
            </div>
          ) : (
            hooks && <p class="muted">{m("choose")}</p>
          )}
        </Pane>
      )}
      {editing && (
        <WebhookDialog webhook={editing === "new" ? undefined : editing} branches={branches} types={types}
          onClose={() => setEditing(null)}
          onSaved={(id, secret) => {
            setEditing(null);
            if (secret) setFresh({ id, secret });
            setReload((n) => n + 1);
            open(id);
          }} />
      )}
    </Shell>
  );
}

function WebhookPane(p: {
  webhook: Webhook; label: string; branches: BranchNode[]; types: TypeInfo[]; secret: string | undefined;
  onSecretDone: () => void; onEdit: () => void; onDeleted: () => void;
}) {
  const w = p.webhook;
  const [log, setLog] = useState<Attempt[] | null>(null);
  const [next, setNext] = useState<string | undefined>(undefined);
  const [logError, setLogError] = useState<unknown>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [reload, setReload] = useState(0);
  const [testing, setTesting] = useState(false);
  const [testResult, setTestResult] = useState<{ text: string; ok: boolean } | null>(null);
  const [confirm, setConfirm] = useState(false);
  useEffect(() => {
    const ac = new AbortController();
    setLogError(null);
    loadAttempts(w.id, undefined, ac.signal).then((pg) => {
      setLog(pg.attempts);
      setNext(pg.next);
    }, (e) => !ac.signal.aborted && setLogError(e));
    return () => ac.abort();
  }, [w.id, reload]);
  const more = async () => {
    setLoadingMore(true);
    try {
      const pg = await loadAttempts(w.id, next);
      setLog((cur) => mergePage(cur ?? [], pg.attempts));
      setNext(pg.next);
    } catch (e) {
      setLogError(e);
    } finally {
      setLoadingMore(false);
    }
  };
  const test = async () => {
    setTesting(true);
    setTestResult(null);
    try {
      const a = await sendTest(w.id);
      setTestResult({
        ok: a.outcome === "accepted",
        text: a.outcome === "accepted"
          ? m("testSent", { outcome: outcomeLabel(a.outcome), status: a.status, duration: duration(a.durationMs) })
          : m("testFailed", { error: a.error ?? outcomeLabel(a.outcome, true) }),
      });
      setReload((n) => n + 1);
    } catch (e) {
      setTestResult({ ok: false, text: m("testFailed", { error: e instanceof Error ? e.message : String(e) }) });
    } finally {
      setTesting(false);
    }
  };
  const names = (ids: number[], all: { id: number; name: string }[]) =>
    ids.length === 0 ? m("all") : ids.map((id) => all.find((x) => x.id === id)?.name ?? `#${id}`).join(", ");
  return (
    <Pane title={p.label} label={p.label}
      actions={<>
        <Button variant="primary" onClick={() => void test()} disabled={testing}>{testing ? m("testing") : m("test")}</Button>
        <Button onClick={p.onEdit}>{m("edit")}</Button>
        <Button variant="danger" onClick={() => setConfirm(true)}>{m("del")}</Button>
      </>}>
      {p.secret && <SecretOnce secret={p.secret} onDone={p.onSecretDone} />}
      <dl class="props">
        <dt>{m("url")}</dt><dd class="mono webhook-url">{w.url}</dd>
        <dt>{m("state")}</dt><dd>{w.enabled ? m("on") : m("off")}</dd>
        <dt>{m("branches")}</dt><dd>{names(w.branches, p.branches)}</dd>
        <dt>{m("types")}</dt><dd>{names(w.types, p.types)}</dd>
        <dt>{m("kinds")}</dt><dd>{w.kinds.length === 0 ? m("all") : w.kinds.map(kindLabel).join(", ")}</dd>
      </dl>
      <div role="status" aria-live="polite" class="test-result">
        {testResult && <p class={testResult.ok ? "ok-text" : "problem"}>{testResult.text}</p>}
      </div>
      <div class="log-head">
        <h2 class="section-title">{m("log")}</h2>
        <Button variant="ghost" onClick={() => setReload((n) => n + 1)}>{m("refresh")}</Button>
      </div>
      {logError !== null && <Problem error={logError} />}
      {!log && logError === null && <Skeleton lines={3} />}
      {log && log.length === 0 && <p class="muted">{m("noAttempts")}</p>}
      {log && log.length > 0 && (
        <table class="attr-table attempt-table">
          <caption class="visually-hidden">{m("log")}</caption>
          <thead>
            <tr>
              <th scope="col">{m("time")}</th><th scope="col">{m("kind")}</th><th scope="col">{m("attempt")}</th>
              <th scope="col">{m("status")}</th><th scope="col">{m("duration")}</th><th scope="col">{m("outcome")}</th><th scope="col">{m("error")}</th>
            </tr>
          </thead>
          <tbody>
            {log.map((a) => (
              <tr key={a.id} class={`attempt attempt-${a.outcome}`} data-delivery={a.deliveryId}>
                <td>{formatDateTime(a.time)}</td>
                <td>{a.test ? m("test_kind") : kindLabel(a.kind)}</td>
                <td>{a.attempt}</td>
                <td class="attempt-status">{a.status === 0 ? m("noResponse") : a.status}</td>
                <td class="attempt-duration">{duration(a.durationMs)}</td>
                <td>{outcomeLabel(a.outcome, a.test)}</td>
                <td class="attempt-error">{a.error ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && <Button onClick={() => void more()} disabled={loadingMore}>{m("more")}</Button>}
      {confirm && (
        <Dialog title={m("delTitle")} onClose={() => setConfirm(false)}
          footer={<>
            <Button onClick={() => setConfirm(false)}>{m("cancel")}</Button>
            <Button variant="danger" onClick={() => {
              deleteWebhook(w.id).then(() => {
                toast(m("deleted"));
                setConfirm(false);
                p.onDeleted();
              }, (e) => toast(e instanceof Error ? e.message : String(e), "error"));
            }}>{m("delConfirm")}</Button>
          </>}>
          <p>{m("delText", { name: p.label })}</p>
        </Dialog>
      )}
    </Pane>
  );
}

/** SecretOnce shows a new webhook's secret, with Copy, until the administrator says it is saved. */
function SecretOnce(p: { secret: string; onDone: () => void }) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const copy = () => {
    navigator.clipboard?.writeText(p.secret).then(() => toast(m("copied")), () => {
      ref.current?.select();
      toast(m("copyFailed"), "error");
    });
  };
  return (
    <section class="notice secret-once" aria-labelledby="secret-title">
      <h2 id="secret-title" class="section-title">{m("secretTitle")}</h2>
      <p>{m("secretText")}</p>
      <div class="secret-row">
        <label for="webhook-secret" class="visually-hidden">{m("secretLabel")}</label>
        <input id="webhook-secret" ref={ref} class="input mono" readOnly value={p.secret} onFocus={(e) => e.currentTarget.select()} />
        <Button onClick={copy}>{m("copy")}</Button>
        <Button variant="primary" onClick={p.onDone}>{m("secretDone")}</Button>
      </div>
    </section>
  );
}
