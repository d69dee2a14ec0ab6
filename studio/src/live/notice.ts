// What the open object says when someone else changes it (the rule; the
// component is ObjectNotice.tsx). The editor's unsaved edits are never
// overwritten silently: with edits, the editor chooses (show the changes,
// or reload and drop the edits); without, the object reloads by itself and
// the notice only says who changed it.
import type { LiveChange } from "./changes";

export type NoticeKind = "updated" | "deleted" | "comment" | "reset" | "branchDeleted";

export interface Notice {
  kind: NoticeKind;
  /** The user name of the writer ("" for a reset or the system). */
  user: string;
  version: number;
  at: number;
  /** Reload now without asking (nothing unsaved would be lost). */
  autoReload: boolean;
  /** Offer "Reload" (drops the unsaved edits) and, where there is something to compare, "Show changes". */
  offerReload: boolean;
  offerShowChanges: boolean;
}

/** noticeOf is the notice a change of the open object gives, or null (own writes, nothing to say). */
export function noticeOf(c: LiveChange, dirty: boolean): Notice | null {
  if (c.own) return null;
  const base = { user: c.user, version: c.version, at: c.at };
  switch (c.kind) {
    case "comment":
      // A comment changes no value: nothing to reload.
      return { ...base, kind: "comment", autoReload: false, offerReload: false, offerShowChanges: false };
    case "deleted":
    case "branchDeleted":
      // Gone: the edits cannot be saved there any more; keep them on screen to copy from.
      return { ...base, kind: c.kind, autoReload: false, offerReload: false, offerShowChanges: false };
    case "reset":
      return { ...base, kind: "reset", autoReload: !dirty, offerReload: dirty, offerShowChanges: dirty };
    default:
      return { ...base, kind: "updated", autoReload: !dirty, offerReload: dirty, offerShowChanges: dirty };
  }
}
