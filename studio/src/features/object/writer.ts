// Who saved the object the editor's save collided with (a 412): the
// object's last writer and when, as the Index records them (modifiedBy,
// modified: the user and time of its last transaction), read once the
// index has reached the transaction; the change the live stream reported
// for the object stands in when the Index cannot answer. The user name
// becomes a display name through GetUserDisplayName (live/activity.ts,
// cached per user).
import type { ObjectItem } from "../../api/generated/index";
import { api } from "../../auth/session";
import type { LiveChange } from "../../live/changes";

export interface Writer {
  /** The user name ("" when not known). */
  user: string;
  /** When (ISO), if known. */
  at?: string | undefined;
  transaction?: number | undefined;
}

/**
 * pickWriter chooses what the conflict view names: the Index's record of
 * the object when the index has reached transaction tx, else the live
 * change of the object at tx or later, else only the transaction.
 */
export function pickWriter(tx: number | undefined, item: ObjectItem | undefined, indexVersion: number | undefined,
  live: LiveChange | undefined): Writer | null {
  if (item?.modifiedBy && (tx === undefined || (indexVersion ?? 0) >= tx)) return { user: item.modifiedBy, at: item.modified, transaction: tx };
  if (live && live.user && !live.own && (tx === undefined || live.version >= tx)) {
    return { user: live.user, at: new Date(live.at).toISOString(), transaction: tx };
  }
  return tx ? { user: "", transaction: tx } : null;
}

/** maxWriterWait bounds how long the Index may wait for the transaction. */
const maxWriterWait = "PT2S";

/** lastWriter reads who wrote object id on branch at transaction tx (or later). */
export async function lastWriter(branch: string, id: number, tx: number | undefined, live: LiveChange | undefined): Promise<Writer | null> {
  try {
    const { data } = await api.call("index", "ObjectSearch", { branch }, {
      filter: { objectIds: [id] }, page: { skip: 0, take: 1 }, ...(tx ? { minChangeTrackingVersion: tx, maxWaitTime: maxWriterWait } : {}),
    });
    return pickWriter(tx, data.objects?.find((o) => o.id === id), data.changeTrackingVersion, live);
  } catch {
    return pickWriter(tx, undefined, undefined, live);
  }
}
