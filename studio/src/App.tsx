// The studio's root: the login until there is a session, then the shell
// with the view the address names.
import { Login } from "./auth/Login";
import { session } from "./auth/session";
import { ContentView } from "./features/content/ContentView";
import { CodeView } from "./features/code/CodeView";
import { ModelView } from "./features/model/ModelView";
import { WebhooksView } from "./features/webhooks/WebhooksView";
import { route } from "./router";
import { Shell } from "./shell/Shell";
import { useStore } from "./store";
import { Toasts } from "./ui/ui";

export function App() {
  const s = useStore(session);
  const r = useStore(route);
  if (!s) return <><Login /><Toasts /></>;
  return (
    <>
      {r.section === "model" ? <ModelView route={r} />
        : r.section === "webhooks" ? <WebhooksView route={r} />
        : r.section === "code" ? <CodeView route={r} />
        : <ContentView route={r} />}
      <Toasts />
    </>
  );
}
