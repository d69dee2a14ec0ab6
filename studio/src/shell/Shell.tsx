// The frame of every view once logged in: the top bar (branch, section,
// language, user), the navigation rail, and the work area.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { account, adminState } from "../auth/account";
import { logout, session } from "../auth/session";
import { loadBranches, type BranchNode } from "../data/branches";
import { type Locale, locale, locales, messages } from "../i18n/i18n";
import { branchSections, navigate, route, type Section } from "../router";
import { createStore, useStore } from "../store";
import { ShortcutHelp } from "../ui/ShortcutHelp";
import { addShortcut } from "../ui/shortcuts";
import { Button, Problem } from "../ui/ui";
import { LiveIndicator } from "../live/LiveIndicator";
import "./shell.css";

const m = messages({
  en: {
    brand: "CMS Studio",
    branch: "Branch",
    content: "Content",
    model: "Model",
    webhooks: "Webhooks",
    code: "Code",
    operations: "Operations",
    jobs: "Jobs",
    sections: "Sections",
    language: "Language",
    logout: "Sign out",
    signedIn: "Signed in as {user}",
    loading: "Loading branches…",
    skip: "Skip to the work area",
    help: "Keyboard shortcuts",
    goContent: "Go to the content",
    goModel: "Go to the model",
    showHelp: "Show the keyboard shortcuts",
    users: "Users",
    account: "My account",
    media: "Media",
  },
  de: {
    brand: "CMS Studio",
    branch: "Branch",
    content: "Inhalte",
    model: "Modell",
    webhooks: "Webhooks",
    code: "Code",
    operations: "Betrieb",
    jobs: "Jobs",
    sections: "Bereiche",
    language: "Sprache",
    logout: "Abmelden",
    signedIn: "Angemeldet als {user}",
    loading: "Branches werden geladen…",
    skip: "Zum Arbeitsbereich springen",
    help: "Tastenkürzel",
    goContent: "Zu den Inhalten",
    goModel: "Zum Modell",
    showHelp: "Tastenkürzel anzeigen",
    users: "Benutzer",
    account: "Mein Konto",
    media: "Medien",
  },
});

const helpOpen = createStore(false);

// The shell's shortcuts hold while the studio runs (not tied to one view's life).
const goTo = (section: Section) => navigate({ branch: route.get().branch, section, query: {} });
addShortcut({ keys: "?", label: () => m("showHelp"), run: () => helpOpen.set(true) });
addShortcut({ keys: "g c", label: () => m("goContent"), run: () => goTo("content") });
addShortcut({ keys: "g m", label: () => m("goModel"), run: () => goTo("model") });

const localeNames: Record<Locale, string> = { en: "English", de: "Deutsch" };

/** uiLanguages are the value languages the studio prefers for names. */
export function uiLanguages(l: Locale): number[] {
  return l === "de" ? [202, 201] : [201, 202];
}

export function Shell(props: { nav?: ComponentChildren; children: ComponentChildren }) {
  const s = useStore(session);
  const r = useStore(route);
  const l = useStore(locale);
  const [branches, setBranches] = useState<BranchNode[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const ac = new AbortController();
    loadBranches(uiLanguages(l), ac.signal).then(setBranches, (e) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [l]);
  // The first branch that is not the root, else the root, once loaded.
  useEffect(() => {
    // The route as it is now, not as it was rendered: the editor may have
    // picked a branch since, which must win.
    const now = route.get();
    if (!now.branch && branches && branches.length > 0) {
      const b = branches.find((x) => x.depth > 0) ?? branches[0];
      if (b) navigate({ ...now, branch: String(b.id) }, true);
    }
  }, [branches, r.branch]);
  const setSection = (section: Section) => navigate({ branch: r.branch, section, query: {} });
  const help = useStore(helpOpen);
  const acc = useStore(account);
  const admin = adminState(acc);
  // Administrators manage webhooks and users and see the operations; everybody else never sees those sections.
  const sections: Section[] = admin === "yes" ? [...branchSections, "users"] : branchSections.filter((x) => x !== "webhooks" && x !== "operations");
  const branchSection = branchSections.includes(r.section) ? r.section : "content";
  return (
    <div class="shell">
      <a class="skip-link" href="#work">{m("skip")}</a>
      <header class="topbar">
        <div class="topbar-main">
          <span class="brand">{m("brand")}</span>
          <label class="topbar-field">
            <span>{m("branch")}</span>
            <select class="input" aria-label={m("branch")} value={r.branch ?? ""} disabled={!branches}
              onChange={(e) => navigate({ branch: e.currentTarget.value, section: branchSection, query: {} })}>
              {!branches && <option value="">{m("loading")}</option>}
              {branches?.map((b) => (
                <option key={b.id} value={String(b.id)}>
                  {"\u00a0\u00a0".repeat(b.depth) + b.name}
                </option>
              ))}
            </select>
          </label>
          <span class="spacer" />
          <LiveIndicator />
          <label class="topbar-field">
            <span class="visually-hidden">{m("language")}</span>
            <select class="input" aria-label={m("language")} value={l} onChange={(e) => locale.set(e.currentTarget.value as Locale)}>
              {locales.map((x) => (
                <option key={x} value={x}>{localeNames[x]}</option>
              ))}
            </select>
          </label>
          <Button variant="ghost" aria-label={m("help")} title={m("help")} onClick={() => helpOpen.set(true)}>
            ?
          </Button>
          <a class={`user ${r.section === "account" ? "active" : ""}`} href="/studio/account" title={m("signedIn", { user: s?.user ?? "" })}
            aria-current={r.section === "account" ? "page" : undefined}
            onClick={(e) => {
              e.preventDefault();
              navigate({ branch: r.branch, section: "account", query: {} });
            }}><span class="visually-hidden">{m("account")}: </span>{s?.user}</a>
          <Button onClick={() => void logout()}>{m("logout")}</Button>
        </div>
        {/* The sections on a row of their own: an administrator's eight do not fit beside the branch and the account at 1280 px. */}
        <nav class="sections" aria-label={m("sections")} data-admin={admin}>
          {sections.map((sec) => (
            <Button key={sec} variant="ghost" class={r.section === sec ? "active" : ""}
              aria-current={r.section === sec ? "page" : undefined} onClick={() => setSection(sec)}>
              {m(sec)}
            </Button>
          ))}
        </nav>
      </header>
      {error !== null && <Problem error={error} />}
      {help && <ShortcutHelp onClose={() => helpOpen.set(false)} />}
      <div class="body">
        {props.nav && <nav class="rail" aria-label={m(r.section)}>{props.nav}</nav>}
        <main id="work" class="work" tabIndex={-1}>
          {props.children}
        </main>
      </div>
    </div>
  );
}
