// The studio's root: the login until there is a session, then the shell
// with the view the address names. The Users, Account and Webhooks screens
// load on demand (their own chunks), so the first load stays within its budget.
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./auth/account";
import { Login } from "./auth/Login";
import { session } from "./auth/session";
import { ContentView } from "./features/content/ContentView";
import { CodeView } from "./features/code/CodeView";
import { ModelView } from "./features/model/ModelView";
import { type Route, route } from "./router";
import { Shell } from "./shell/Shell";
import { useStore } from "./store";
import { Problem, Skeleton, Toasts } from "./ui/ui";

type View = ComponentType<{ route: Route }>;

type LazySection = "users" | "account" | "webhooks";

const lazyViews: Record<LazySection, () => Promise<View>> = {
  users: () => import("./features/users/UsersView").then((mod) => mod.UsersView),
  account: () => import("./features/users/AccountView").then((mod) => mod.AccountView),
  webhooks: () => import("./features/webhooks/WebhooksView").then((mod) => mod.WebhooksView),
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
  if (r.section === "users" || r.section === "account" || r.section === "webhooks") view = <Lazy section={r.section} route={r} />;
  else if (r.section === "model") view = <ModelView route={r} />;
  else if (r.section === "code") view = <CodeView route={r} />;
  else view = <ContentView route={r} />;
  return (
    <>
      {view}
      <Toasts />
    </>
  );
}
