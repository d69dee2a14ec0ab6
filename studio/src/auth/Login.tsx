// The login form: the password is traded for a token at once and never
// kept. Wrong credentials, a locked user (429) and an overloaded server
// (503) are explained in words, with the time to wait.
import { useState } from "preact/hooks";
import { ApiError, OfflineError } from "../api/client";
import { messages } from "../i18n/i18n";
import { Button, Field } from "../ui/ui";
import { useStore } from "../store";
import { ended, login } from "./session";
import "./login.css";

const m = messages({
  en: {
    title: "Sign in to the studio",
    user: "User name",
    password: "Password",
    submit: "Sign in",
    busy: "Signing in…",
    wrong: "The user name or the password is wrong.",
    locked: "Too many failed sign-ins. Try again in {time}.",
    second: "1 second",
    seconds: "{s} seconds",
    lockedNoTime: "Too many failed sign-ins. Try again later.",
    overloaded: "The server is busy. Try again in {time}.",
    offline: "The server cannot be reached. Check the connection and try again.",
    off: "This server does not issue tokens: ask its operator to configure authTokenKey.",
    ended: "You were signed out: the server refused your session ({detail}). It ends when you sign out elsewhere, your password changes or an administrator disables your account. Sign in again if you may.",
  },
  de: {
    title: "Am Studio anmelden",
    user: "Benutzername",
    password: "Passwort",
    submit: "Anmelden",
    busy: "Anmeldung läuft…",
    wrong: "Benutzername oder Passwort ist falsch.",
    locked: "Zu viele fehlgeschlagene Anmeldungen. Versuchen Sie es in {time} erneut.",
    second: "1 Sekunde",
    seconds: "{s} Sekunden",
    lockedNoTime: "Zu viele fehlgeschlagene Anmeldungen. Versuchen Sie es später erneut.",
    overloaded: "Der Server ist ausgelastet. Versuchen Sie es in {time} erneut.",
    offline: "Der Server ist nicht erreichbar. Prüfen Sie die Verbindung und versuchen Sie es erneut.",
    off: "Dieser Server stellt keine Tokens aus: Bitten Sie den Betreiber, authTokenKey zu setzen.",
    ended: "Sie wurden abgemeldet: Der Server hat Ihre Sitzung abgelehnt ({detail}). Das geschieht, wenn Sie sich anderswo abmelden, Ihr Passwort geändert wird oder ein Administrator Ihr Konto deaktiviert. Melden Sie sich erneut an, wenn Sie dürfen.",
  },
});

/** loginError says why a login failed, in words. */
export function loginError(e: unknown): string {
  if (e instanceof OfflineError) return m("offline");
  if (e instanceof ApiError) {
    if (e.status === 401) return m("wrong");
    const time = (s: number) => (s === 1 ? m("second") : m("seconds", { s }));
    if (e.status === 429) return e.retryAfter ? m("locked", { time: time(e.retryAfter) }) : m("lockedNoTime");
    if (e.status === 503) return m("overloaded", { time: time(e.retryAfter ?? 5) });
    if (e.status === 501) return m("off");
    return e.message;
  }
  return e instanceof Error ? e.message : String(e);
}

export function Login() {
  const [user, setUser] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const why = useStore(ended);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await login(user, password);
    } catch (e) {
      setError(loginError(e));
      setPassword("");
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form class="login-card" onSubmit={submit} aria-describedby={error ? "login-error" : undefined}>
        <h1>{m("title")}</h1>
        {why !== null && !error && (
          <div id="login-ended" class="problem" role="alert">
            {m("ended", { detail: why })}
          </div>
        )}
        <Field label={m("user")} for="login-user">
          <input id="login-user" name="username" autocomplete="username" required value={user}
            onInput={(e) => setUser(e.currentTarget.value)} autofocus />
        </Field>
        <Field label={m("password")} for="login-password">
          <input id="login-password" name="password" type="password" autocomplete="current-password" required
            value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        {error && (
          <div id="login-error" class="problem" role="alert">
            {error}
          </div>
        )}
        <Button variant="primary" type="submit" disabled={busy}>
          {busy ? m("busy") : m("submit")}
        </Button>
      </form>
    </main>
  );
}
