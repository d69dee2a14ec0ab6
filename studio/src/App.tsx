// The studio's root: the login until there is a session, then the shell
// with the view the address names. Operations (administrators only) is
// loaded on demand: the first load does not carry it.
import type { FunctionComponent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Login } from "./auth/Login";
import { session } from "./auth/session";
import { adminStore } from "./data/admin";
import { ContentView } from "./features/content/ContentView";
import { ModelView } from "./features/model/ModelView";
import { messages } from "./i18n/i18n";
import { route, type Route } from "./router";
import { Shell } from "./shell/Shell";
import { useStore } from "./store";
import { Pane, Problem, Skeleton, Toasts } from "./ui/ui";
import "./features/operations/operations.css";

const m = messages({
  en: { operations: "Operations", adminsOnly: "Only administrators see the operations of the installation." },
  de: { operations: "Betrieb", adminsOnly: "Nur Administratoren sehen den Betrieb der Installation." },
});

export function App() {
  const s = useStore(session);
  const r = useStore(route);
  if (!s) return <><Login /><Toasts /></>;
  return (
    <>
      {r.section === "model" ? <ModelView route={r} /> : r.section === "operations" ? <Operations route={r} /> : <ContentView route={r} />}
      <Toasts />
    </>
  );
}

type View = FunctionComponent<{ route: Route }>;

/** Operations loads its view on demand, for administrators only. */
function Operations({ route: r }: { route: Route }) {
  const admin = useStore(adminStore());
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
