// Hooks for the views that show what the change stream changes.
//
// Contract (for the list, the object editor and any other view):
//
//   useLiveObject(branch, id, onChange)   calls onChange(change) when a change touches object id on branch
//   useLiveType(branch, typeId, onChange) calls onChange(change) when a change touches an object of type typeId
//
// - branch is the route's branch (an id or ApiIdentifier, as in the URL); id and typeId are numeric ids (a
//   number or a numeric string; anything else, or undefined, subscribes to nothing but resets).
// - "Touches": the object is in change.objectIds (useLiveObject), or typeId is in change.types (useLiveType;
//   creations, updates and deletions of the type's objects, and comments on them). A change of a branch is
//   also a change of the branches below it that inherit from it: the stream of a branch carries its
//   ancestors' changes (change.branch says where it was written).
// - change.kind is "created", "updated", "deleted", "comment" (a comment on the object), "branchDeleted"
//   (change.objectIds holds the branch; passed on when it is the subscribed branch, or when branch is not a
//   numeric id and that cannot be told: everything shown is gone) or "reset" (the stream missed changes:
//   reload what you show; always passed on).
// - change.user is who committed it, change.own is true when this tab wrote it (the API client reports every
//   write; an event waits for the writes in flight, so a save's own echo is own): views usually ignore own
//   changes. Another tab of the same user is not own.
// - The event is sent once Delivery and the index show the change, and after Delivery's cache dropped what it
//   made stale: a re-fetch right away sees it (Management reads the store and sees it anyway).
// - onChange may change between renders (the latest is called); the subscription is shared with the whole
//   app (one stream per branch, src/live/changes.ts) and ends when the component unmounts or branch/id change.
// - Never overwrite an editor's unsaved edits from onChange: tell the editor and let them choose.
import { useEffect, useRef } from "preact/hooks";
import { subscribe, type LiveChange } from "./changes";

/** concernsAll reports a change every view of branch must hear of: a reset, or the deletion of branch itself. */
export function concernsAll(c: LiveChange, branch: string): boolean {
  if (c.kind === "reset") return true;
  if (c.kind !== "branchDeleted") return false;
  const b = numeric(branch);
  return b === undefined || c.objectIds.includes(b);
}

/** touchesObject reports whether c concerns object id on branch. */
export function touchesObject(c: LiveChange, branch: string, id: number): boolean {
  return concernsAll(c, branch) || (c.kind !== "branchDeleted" && c.objectIds.includes(id));
}

/** touchesType reports whether c concerns an object of type typeId on branch. */
export function touchesType(c: LiveChange, branch: string, typeId: number): boolean {
  return concernsAll(c, branch) || (c.kind !== "branchDeleted" && c.types.includes(typeId));
}

function numeric(v: number | string | undefined): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

function useLive(branch: string | undefined, key: number | string | undefined, match: (c: LiveChange, b: string, k: number) => boolean,
  onChange: (c: LiveChange) => void) {
  const cb = useRef(onChange);
  cb.current = onChange;
  const k = numeric(key);
  useEffect(() => {
    if (!branch) return undefined;
    return subscribe(branch, (c) => {
      if (concernsAll(c, branch) || (k !== undefined && match(c, branch, k))) cb.current(c);
    });
  }, [branch, k]);
}

/** useLiveObject calls onChange when a change touches object id on branch (see the contract above). */
export function useLiveObject(branch: string | undefined, id: number | string | undefined, onChange: (c: LiveChange) => void) {
  useLive(branch, id, touchesObject, onChange);
}

/** useLiveType calls onChange when a change touches an object of type typeId on branch (see the contract above). */
export function useLiveType(branch: string | undefined, typeId: number | string | undefined, onChange: (c: LiveChange) => void) {
  useLive(branch, typeId, touchesType, onChange);
}
