// useBranchAccess: the user's access to a branch for a view that offers
// changes (the object editor, a type's list), kept current while the view
// is open, so that a write grant removed meanwhile turns the view read-only
// with the reason before the editor types on into a save that fails. The
// access is asked again (src/data/access.ts, one probe at a time):
//   - when the branch's change stream reports a change of the user's own
//     user object (the grants are its values, written on the default branch,
//     whose changes every branch's stream carries; of any user object while
//     the account is not read yet), or a reset;
//   - when the stream is live again after a gap;
//   - when the tab is shown or focused again (once: a probe of the last 2 s stands);
//   - every 30 s while the view is open.
// A grant given back makes the view writable again the same way.
import { useEffect } from "preact/hooks";
import { account } from "../auth/account";
import { type Access, branchAccess, grantsMayHaveChanged, recheckAccess } from "../data/access";
import { createStore, useStore } from "../store";
import { liveStore, subscribe } from "./changes";

const every = 30_000;
/** showMaxAge: a probe younger than this stands when the tab is shown or focused again. */
const showMaxAge = 2_000;
const noBranch = createStore<Access>({ kind: "checking" });

export function useBranchAccess(branch: string): Access {
  const access = useStore(branch ? branchAccess(branch) : noBranch);
  useEffect(() => {
    if (!branch) return undefined;
    const again = () => recheckAccess(branch);
    const off = subscribe(branch, (c) => {
      const acc = account.get();
      if (grantsMayHaveChanged(c, acc ? acc.userId ?? 0 : null)) again();
    });
    const ls = liveStore(branch);
    let was = ls.get().state;
    const offState = ls.subscribe((s) => {
      if (s.state === "live" && was !== "live" && was !== "connecting") again();
      was = s.state;
    });
    // Returning to the tab fires both focus and visibilitychange: one probe (a fresh one stands).
    const shown = () => recheckAccess(branch, Date.now(), showMaxAge);
    const onShow = () => {
      if (document.visibilityState === "visible") shown();
    };
    window.addEventListener("focus", shown);
    document.addEventListener("visibilitychange", onShow);
    const timer = setInterval(again, every);
    return () => {
      off();
      offState();
      window.removeEventListener("focus", shown);
      document.removeEventListener("visibilitychange", onShow);
      clearInterval(timer);
    };
  }, [branch]);
  return access;
}
