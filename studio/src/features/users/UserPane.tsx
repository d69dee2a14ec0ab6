// One user: its rights (administrator, internal, the branches it reads and
// writes) saved together; resetting its password and disabling or
// enabling it, each asked in a dialog first.
import { useState } from "preact/hooks";
import type { BranchNode } from "../../data/branches";
import { type Access, choiceOf, type User } from "../../data/users";
import { Button, Dialog, Pane, problemText, toast } from "../../ui/ui";
import { disableUser, updateUser } from "./calls";
import { GrantTree } from "./GrantTree";
import { m } from "./messages";
import { PasswordFields, passwordError } from "./PasswordFields";

export function UserPane(p: { user: User; tree: BranchNode[]; onChanged: () => void }) {
  const u = p.user;
  const [admin, setAdmin] = useState(u.admin);
  const [internal, setInternal] = useState(u.internal);
  const [choice, setChoice] = useState(() => choiceOf(u.read, u.write));
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [dialog, setDialog] = useState<"password" | "disable" | null>(null);
  const run = async (what: () => Promise<void>, done: string) => {
    setBusy(true);
    setProblem(null);
    try {
      await what();
      toast(done);
      setDialog(null);
      p.onChanged();
    } catch (e) {
      setProblem(problemText(e));
    } finally {
      setBusy(false);
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    void run(() => updateUser(u.id, { admin, internal, choice }, m("comment")), m("saved", { user: u.userName }));
  };
  return (
    <Pane title={u.userName} label={m("grantsOf", { user: u.userName })}
      actions={<>
        <Button onClick={() => setDialog("password")} disabled={busy}>{m("resetPassword")}</Button>
        {u.disabled
          ? <Button onClick={() => void run(() => updateUser(u.id, { enable: true }, m("comment")), m("enableDone", { user: u.userName }))} disabled={busy}>{m("enable")}</Button>
          : <Button variant="danger" onClick={() => setDialog("disable")} disabled={busy}>{m("disable")}</Button>}
      </>}>
      <p class="user-summary">
        <span>{u.displayName}</span>
        {" · "}
        <span class={u.disabled ? "badge badge-deleted" : "badge"}>{m("status")}: {u.disabled ? m("disabled") : m("active")}</span>
      </p>
      {problem && dialog === null && <div class="problem" role="alert">{problem}</div>}
      <form class="user-form" onSubmit={save}>
        <fieldset class="user-flags">
          <legend>{m("flags")}</legend>
          <label><input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.currentTarget.checked)} /> {m("admin")}</label>
          <label><input type="checkbox" checked={internal} onChange={(e) => setInternal(e.currentTarget.checked)} /> {m("internal")}</label>
        </fieldset>
        <GrantTree tree={p.tree} choice={choice} onChange={(c: Map<number, Access>) => setChoice(c)} idPrefix={`user-${u.id}`} />
        <Button variant="primary" type="submit" disabled={busy}>{m("save")}</Button>
      </form>
      {dialog === "password" && <ResetPasswordDialog user={u} busy={busy} problem={problem} onClose={() => setDialog(null)}
        onSet={(pw) => void run(() => updateUser(u.id, { password: pw }, m("comment")), m("resetDone", { user: u.userName }))} />}
      {dialog === "disable" && (
        <Dialog title={m("disableTitle", { user: u.userName })} onClose={() => setDialog(null)}
          footer={<>
            <Button onClick={() => setDialog(null)}>{m("cancel")}</Button>
            <Button variant="danger" disabled={busy} onClick={() => void run(() => disableUser(u.id, m("comment")), m("disableDone", { user: u.userName }))}>{m("disable").replace("…", "")}</Button>
          </>}>
          {problem && <div class="problem" role="alert">{problem}</div>}
          <p>{m("disableText", { user: u.userName })}</p>
        </Dialog>
      )}
    </Pane>
  );
}

function ResetPasswordDialog(p: { user: User; busy: boolean; problem: string | null; onClose: () => void; onSet: (pw: string) => void }) {
  const [pw, setPw] = useState("");
  const [repeat, setRepeat] = useState("");
  const [error, setError] = useState<string | undefined>();
  const submit = (e: Event) => {
    e.preventDefault();
    const err = passwordError(pw, repeat);
    setError(err);
    if (!err) p.onSet(pw);
  };
  return (
    <Dialog title={m("resetTitle", { user: p.user.userName })} onClose={p.onClose}
      footer={<>
        <Button onClick={p.onClose}>{m("cancel")}</Button>
        <Button variant="primary" type="submit" form="reset-password" disabled={p.busy}>{m("setPassword")}</Button>
      </>}>
      <form id="reset-password" class="user-form" onSubmit={submit} noValidate>
        {p.problem && <div class="problem" role="alert">{p.problem}</div>}
        <PasswordFields idPrefix="reset" value={pw} repeat={repeat} onValue={setPw} onRepeat={setRepeat} error={error} />
      </form>
    </Dialog>
  );
}
