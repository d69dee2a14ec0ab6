// The signed-in user's own account (GET /auth/account): its flags decide
// what the shell offers (the Users screen only to administrators), its
// grants are shown on the Account screen. Read once per session; the
// Account screen reads it again. changePassword adopts the token the
// answer carries (the change revoked the old one).
import type { Account } from "../api/generated/management";
import { retry } from "../data/retry";
import { createStore } from "../store";
import { adopt, api, session } from "./session";

export const account = createStore<Account | null>(null);

/** Admin is what the studio knows of the user's administrator flag: its account not read yet, yes or no. */
export type Admin = "checking" | "yes" | "no";

/** adminState reads the account's flag (null: not read yet). It decides what the studio offers; the server decides every call. */
export function adminState(acc: Account | null): Admin {
  return acc === null ? "checking" : acc.admin ? "yes" : "no";
}

let loadedFor: string | null = null;

/** loadAccount reads the account, and keeps it for the shell. */
export async function loadAccount(signal?: AbortSignal): Promise<Account> {
  const { data } = await api.call("management", "GetAccount", {}, undefined, { signal });
  account.set(data);
  return data;
}

// loadFor reads the account of user until it arrives (a busy server or a
// dropped connection must not leave the shell "checking" for good), while
// that user is still the one signed in.
function loadFor(user: string): void {
  retry(() => loadAccount(), { wanted: () => loadedFor === user && account.get() === null }).catch(() => undefined);
}

session.subscribe((s) => {
  const user = s?.user ?? null;
  if (user === loadedFor) return;
  loadedFor = user;
  account.set(null);
  if (user) loadFor(user);
});
if (session.get()) {
  loadedFor = session.get()!.user;
  loadFor(loadedFor);
}

/** changePassword changes the own password; errors are ApiErrors (400 wrong current password, 429 locked). */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  const { data } = await api.call("management", "ChangePassword", {}, { currentPassword, newPassword });
  if (data.token) adopt(data.token);
}
