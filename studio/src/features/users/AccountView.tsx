// The own account (every user): who the studio is signed in as, its
// rights and the branches it reaches (GET /auth/account, resolved against
// the branch tree it may read), and changing its own password (POST
// /auth/password; the answer's fresh token replaces the session's).
import { useEffect, useState } from "preact/hooks";
import type { Account } from "../../api/generated/management";
import { changePassword, loadAccount } from "../../auth/account";
import { type BranchNode, loadBranches } from "../../data/branches";
import { accountGrants } from "../../data/users";
import { locale, messages } from "../../i18n/i18n";
import type { Route } from "../../router";
import { Shell, uiLanguages } from "../../shell/Shell";
import { useStore } from "../../store";
import { Button, Field, Pane, Problem, Skeleton, problemText, toast } from "../../ui/ui";
import { m as um } from "./messages";
import { PasswordFields, passwordError } from "./PasswordFields";
import "./users.css";

const m = messages({
  en: {
    title: "My account",
    signedInAs: "Signed in as {user}",
    rights: "Rights",
    grants: "Branches you may use",
    branch: "Branch",
    access: "Access",
    via: "Granted on",
    noGrants: "You have no grant on any branch yet: ask an administrator.",
    adminAll: "As an administrator you may read and change every branch, and manage users.",
    internalNote: "Internal: you may act for other users.",
    password: "Change my password",
    current: "Current password",
    next: "New password",
    change: "Change password",
    changed: "Your password was changed. Your other sessions have ended.",
  },
  de: {
    title: "Mein Konto",
    signedInAs: "Angemeldet als {user}",
    rights: "Rechte",
    grants: "Branches, die Sie nutzen dürfen",
    branch: "Branch",
    access: "Zugriff",
    via: "Gewährt auf",
    noGrants: "Sie haben noch auf keinem Branch ein Recht: Fragen Sie einen Administrator.",
    adminAll: "Als Administrator dürfen Sie jeden Branch lesen und ändern und Benutzer verwalten.",
    internalNote: "Intern: Sie dürfen für andere Benutzer handeln.",
    password: "Mein Passwort ändern",
    current: "Aktuelles Passwort",
    next: "Neues Passwort",
    change: "Passwort ändern",
    changed: "Ihr Passwort wurde geändert. Ihre anderen Sitzungen sind beendet.",
  },
});

export function AccountView(_: { route: Route }) {
  const l = useStore(locale);
  const pref = uiLanguages(l);
  const [acc, setAcc] = useState<Account | null>(null);
  const [tree, setTree] = useState<BranchNode[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const ac = new AbortController();
    Promise.all([loadAccount(ac.signal), loadBranches(pref, ac.signal)]).then(([a, t]) => {
      setAcc(a);
      setTree(t);
    }, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [l]);
  const grants = acc && tree ? accountGrants(acc, tree) : [];
  const names = new Map((tree ?? []).map((n) => [n.id, n.name]));
  return (
    <Shell>
      <Pane title={m("title")}>
        {error !== null && <Problem error={error} />}
        {!acc && error === null && <Skeleton lines={4} />}
        {acc && tree && (
          <>
            <section class="account-section" aria-labelledby="account-rights">
              <h2 id="account-rights">{m("rights")}</h2>
              <p>{m("signedInAs", { user: acc.userName ?? "" })}</p>
              {acc.admin && <p>{m("adminAll")}</p>}
              {acc.internal && <p>{m("internalNote")}</p>}
            </section>
            {!acc.admin && (
              <section class="account-section" aria-labelledby="account-grants">
                <h2 id="account-grants">{m("grants")}</h2>
                {grants.length === 0 ? <p>{m("noGrants")}</p> : (
                  <table class="account-grants" aria-labelledby="account-grants">
                    <thead><tr><th scope="col">{m("branch")}</th><th scope="col">{m("access")}</th><th scope="col">{m("via")}</th></tr></thead>
                    <tbody>
                      {grants.map((g) => (
                        <tr key={g.branch.id} data-branch={g.branch.id}>
                          <td>{g.branch.name}</td>
                          <td>{um(g.access)}</td>
                          <td>{names.get(g.from) ?? g.from}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </section>
            )}
            <ChangePassword />
          </>
        )}
      </Pane>
    </Shell>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const err = passwordError(next, repeat);
    setError(err);
    setProblem(null);
    if (err) return;
    setBusy(true);
    try {
      await changePassword(current, next);
      setCurrent("");
      setNext("");
      setRepeat("");
      toast(m("changed"));
    } catch (x) {
      setProblem(problemText(x));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="account-section" aria-labelledby="account-password">
      <h2 id="account-password">{m("password")}</h2>
      <form class="user-form" onSubmit={submit} noValidate>
        {problem && <div class="problem" role="alert">{problem}</div>}
        <Field label={m("current")} for="account-current">
          <input id="account-current" class="input" type="password" autocomplete="current-password" required value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)} />
        </Field>
        <PasswordFields idPrefix="account-new" label={m("next")} value={next} repeat={repeat} onValue={setNext} onRepeat={setRepeat} error={error} />
        <Button variant="primary" type="submit" disabled={busy}>{m("change")}</Button>
      </form>
    </section>
  );
}
