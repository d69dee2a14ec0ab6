// A new password, typed twice, checked against the API's rules before it
// is sent (data/users.ts passwordProblem).
import { passwordProblem } from "../../data/users";
import { Field } from "../../ui/ui";
import { m } from "./messages";

export function passwordError(pw: string, repeat: string): string | undefined {
  const p = passwordProblem(pw, repeat);
  return p ? m(p) : undefined;
}

export function PasswordFields(p: { idPrefix: string; value: string; repeat: string; onValue: (v: string) => void; onRepeat: (v: string) => void; error?: string | undefined; label?: string }) {
  return (
    <>
      <Field label={p.label ?? m("password")} for={`${p.idPrefix}-password`} error={p.error}>
        <input id={`${p.idPrefix}-password`} class="input" type="password" autocomplete="new-password" required value={p.value}
          aria-invalid={p.error ? "true" : undefined} aria-describedby={p.error ? `${p.idPrefix}-password-error` : undefined}
          onInput={(e) => p.onValue(e.currentTarget.value)} />
      </Field>
      <Field label={m("repeat")} for={`${p.idPrefix}-repeat`}>
        <input id={`${p.idPrefix}-repeat`} class="input" type="password" autocomplete="new-password" required value={p.repeat}
          onInput={(e) => p.onRepeat(e.currentTarget.value)} />
      </Field>
    </>
  );
}
