// The Users screen (administrators): the users in the rail, the chosen
// one's rights in the work area (flags, the branches it reads and writes),
// and the dialogs that create a user, reset a password and disable one.
// Everything goes through the public API: user objects on branch 4
// (calls.ts); a caller who is no administrator gets the API's refusal.
import { useEffect, useState } from "preact/hooks";
import { ApiError } from "../../api/client";
import { account } from "../../auth/account";
import { type BranchNode, loadBranches } from "../../data/branches";
import { type User, sortUsers } from "../../data/users";
import { locale } from "../../i18n/i18n";
import { navigate, type Route } from "../../router";
import { Shell, uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Pane, Problem, Skeleton } from "../../ui/ui";
import { listUsers } from "./calls";
import { m } from "./messages";
import { NewUserDialog } from "./NewUserDialog";
import { UserPane } from "./UserPane";
import "./users.css";

export function UsersView({ route: r }: { route: Route }) {
  const l = useStore(locale);
  const acc = useStore(account);
  const pref = uiLanguages(l);
  const [users, setUsers] = useState<User[] | null>(null);
  const [tree, setTree] = useState<BranchNode[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reload, setReload] = useState(0);
  const [creating, setCreating] = useState(false);
  useEffect(() => {
    setError(null);
    const ac = new AbortController();
    Promise.all([listUsers(pref, ac.signal), loadBranches(pref, ac.signal)]).then(([us, t]) => {
      setUsers(sortUsers(us));
      setTree(t);
    }, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [l, reload]);
  const forbidden = error instanceof ApiError && error.status === 403;
  const notAdmin = acc !== null && !acc.admin;
  const current = users?.find((u) => String(u.id) === r.user);
  const open = (u: User) => navigate({ branch: r.branch, section: "users", user: String(u.id), query: {} });

  if (forbidden || (notAdmin && users)) {
    return (
      <Shell>
        <Pane title={m("users")}>
          <div class="problem" role="alert">
            <p>{m("forbidden")}</p>
            <p>{forbidden ? (error as ApiError).message : m("adminsOnly")}</p>
          </div>
        </Pane>
      </Shell>
    );
  }

  const nav = (
    <div class="users-nav">
      <div class="model-nav-head">
        <h2 class="rail-title">{m("users")}</h2>
        <Button variant="primary" onClick={() => setCreating(true)} disabled={!users || !tree}>{m("newUser")}</Button>
      </div>
      {!users && error === null && <Skeleton lines={6} />}
      {users && (
        <ul class="user-nav" aria-label={m("list", { n: users.length })}>
          {users.map((u) => (
            <li key={u.id}>
              <a href={`/studio/users/${u.id}`} aria-current={current?.id === u.id ? "page" : undefined}
                class={`user-link ${current?.id === u.id ? "active" : ""} ${u.disabled ? "user-disabled" : ""}`}
                onClick={(e) => {
                  e.preventDefault();
                  open(u);
                }}>
                <span class="user-link-name">{u.userName}</span>
                <span class="muted user-link-meta">
                  {[u.displayName !== u.userName ? u.displayName : "", u.admin ? m("adminShort") : "", u.disabled ? m("disabled") : ""].filter(Boolean).join(" · ")}
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );

  return (
    <Shell nav={nav}>
      {error !== null && <Pane title={m("users")}><Problem error={error} /></Pane>}
      {error === null && current && tree ? (
        <UserPane key={current.id} user={current} tree={tree} onChanged={() => setReload((n) => n + 1)} />
      ) : (
        error === null && (
          <Pane title={m("users")}>
            {!users && <Skeleton lines={4} />}
            {users && r.user && !current && <div class="problem" role="alert">{m("notFound", { id: r.user })}</div>}
            {users && <p class="muted">{m("choose")}</p>}
          </Pane>
        )
      )}
      {creating && tree && (
        <NewUserDialog tree={tree} onClose={() => setCreating(false)} onCreated={(id) => {
          setCreating(false);
          setReload((n) => n + 1);
          navigate({ branch: r.branch, section: "users", user: String(id), query: {} });
        }} />
      )}
    </Shell>
  );
}
