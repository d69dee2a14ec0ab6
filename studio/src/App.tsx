// The studio's root: the login until there is a session, then the shell
// with the view the address names. The Users, Account, Webhooks, Media, Jobs and
// Operations screens load on demand (their own chunks), so the first load
// stays within its budget; Operations only for administrators.
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Login } from "./auth/Login";
import { session } from "./auth/session";
import { ContentView } from "./features/content/ContentView";
import { CodeView } from "./features/code/CodeView";
import { ModelView } from "./features/model/ModelView";
import { messages } from "./i18n/i18n";
import { type Route, route } from "./router";
import { Shell } from "./shell/Shell";
import { useStore } from "./store";
import { Pane, Problem, Skeleton, Toasts } from "./ui/ui";
import { adminState, account } from "./auth/account";
import "./features/operations/operations.css";
import "./features/jobs/jobs.css";

const m = messages({
  en: { operations: "Operations", adminsOnly: "Only administrators see the operations of the installation." },
  de: { operations: "Betrieb", adminsOnly: "Nur Administratoren sehen den Betrieb der Installation." },
});

type View = ComponentType<{ route: Route }>;

type LazySection = "users" | "account" | "webhooks" | "media" | "jobs";

const lazyViews: Record<LazySection, () => Promise<View>> = {
  users: () => import("./features/users/UsersView").then((mod) => mod.UsersView),
  account: () => import("./features/users/AccountView").then((mod) => mod.AccountView),
  webhooks: () => import("./features/webhooks/WebhooksView").then((mod) => mod.WebhooksView),
  media: () => import("./features/media/MediaView").then((mod) => mod.MediaView),
  jobs: () => import("./features/jobs/JobsView").then((mod) => mod.JobsView),
};

/** Lazy shows the view of a section loaded on demand, the shell with a skeleton meanwhile. */
function Lazy(p: { section: LazySection; route: Route }) {
  const [view, setView] = useState<{ section: string; View: View } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    lazyViews[p.section]().then((View) => live && setView({ section: p.section, View }), (e) => live && setError(e));
    return () => {
      live = false;
    };
  }, [p.section]);
  if (view && view.section === p.section) return <view.View route={p.route} />;
  return <Shell>{error !== null ? <Problem error={error} /> : <Skeleton lines={6} />}</Shell>;
}

export function App() {
  const s = useStore(session);
  const r = useStore(route);
  if (!s) return <><Login /><Toasts /></>;
  let view;
  if (r.section === "users" || r.section === "account" || r.section === "webhooks" || r.section === "media" || r.section === "jobs") view = <Lazy section={r.section} route={r} />;
  else if (r.section === "model") view = <ModelView route={r} />;
  else if (r.section === "code") view = <CodeView route={r} />;
  else if (r.section === "operations") view = <Operations route={r} />;
  else view = <ContentView route={r} />;
  return (
    <>
      {view}
      <Toasts />
    </>
  );
}

/** Operations loads its view on demand, for administrators only. */
function Operations({ route: r }: { route: Route }) {
  const admin = adminState(useStore(account));
  const [view, setView] = useState<{ View: View } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (admin !== "yes" || view) return;
    import("./features/operations/OperationsView").then((mod) => setView({ View: mod.OperationsView }), setError);
  }, [admin]);
  if (admin === "yes" && view) return <view.View route={r} />;
  return (
    <Shell>
      <Pane title={m("operations")}>
        {admin === "no" ? <p class="notice">{m("adminsOnly")}</p> : error !== null ? <Problem error={error} /> : <Skeleton lines={8} />}
      </Pane>
    </Shell>
  );
}
