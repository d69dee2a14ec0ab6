// Creating a user: user name, display name, password, flags and grants.
import { useState } from "preact/hooks";
import type { BranchNode } from "../../data/branches";
import type { Access } from "../../data/users";
import { Button, Dialog, Field, problemText, toast } from "../../ui/ui";
import { createUser } from "./calls";
import { GrantTree } from "./GrantTree";
import { m } from "./messages";
import { PasswordFields, passwordError } from "./PasswordFields";

export function NewUserDialog(p: { tree: BranchNode[]; onClose: () => void; onCreated: (id: number) => void }) {
  const [userName, setUserName] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [admin, setAdmin] = useState(false);
  const [internal, setInternal] = useState(false);
  const [choice, setChoice] = useState(new Map<number, Access>());
  const [pwError, setPwError] = useState<string | undefined>();
  const [nameError, setNameError] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const ne = userName.trim() ? undefined : m("nameNeeded");
    const pe = passwordError(password, repeat);
    setNameError(ne);
    setPwError(pe);
    if (ne || pe) return;
    setBusy(true);
    setProblem(null);
    try {
      const id = await createUser({ userName, displayName, password, admin, internal, choice }, m("comment"));
      toast(m("created", { user: userName.trim() }));
      p.onCreated(id);
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={m("newUser")} onClose={p.onClose}
      footer={<>
        <Button onClick={p.onClose}>{m("cancel")}</Button>
        <Button variant="primary" type="submit" form="new-user" disabled={busy}>{m("create")}</Button>
      </>}>
      <form id="new-user" class="user-form" onSubmit={submit} noValidate>
        {problem && <div class="problem" role="alert">{problem}</div>}
        <Field label={m("userName")} for="new-user-name" error={nameError}>
          <input id="new-user-name" class="input" autocomplete="off" required value={userName} autofocus
            aria-invalid={nameError ? "true" : undefined} aria-describedby={nameError ? "new-user-name-error" : undefined}
            onInput={(e) => setUserName(e.currentTarget.value)} />
        </Field>
        <Field label={m("displayName")} for="new-user-display">
          <input id="new-user-display" class="input" autocomplete="off" value={displayName} onInput={(e) => setDisplayName(e.currentTarget.value)} />
        </Field>
        <PasswordFields idPrefix="new-user" value={password} repeat={repeat} onValue={setPassword} onRepeat={setRepeat} error={pwError} />
        <fieldset class="user-flags">
          <legend>{m("flags")}</legend>
          <label><input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.currentTarget.checked)} /> {m("admin")}</label>
          <label><input type="checkbox" checked={internal} onChange={(e) => setInternal(e.currentTarget.checked)} /> {m("internal")}</label>
        </fieldset>
        <GrantTree tree={p.tree} choice={choice} onChange={setChoice} idPrefix="new-user" />
      </form>
    </Dialog>
  );
}
