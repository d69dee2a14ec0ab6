// The media library's data (docs/files.md, docs/studio.md#media): binary
// proxy objects (BPOs, objects of a type with 5009 objectTypeBinaryProxy)
// naming a stored file by 11000 externalBinaryMD5 (the committed upload's
// guid), 11005 externalBinaryFileExtension and 11001 externalBinaryFileName.
// The grid reads a BPO type's objects from Delivery (name search with the
// `displayName:` words filter, the file type with `externalBinaryFileExtension=`),
// its file types from Delivery's occurrences, thumbnails from Delivery's
// thumbnails operation, "where used" from Delivery's reverse references
// (resolveReverse over the branch's BinRef attributes); uploads go through
// Management's fileUpload operations (upload.ts), BPOs are written with
// Management's objects operations.
import type { ApiObject } from "../api/generated/delivery";
import type { CmsObject, CmsValue } from "../api/generated/management";
import { api } from "../auth/session";
import { loadTypes, type TypeInfo } from "./types";
import type { ChunkRequest, FileUploadResult, Stored } from "./upload";
import { displayName, values } from "./values";

/** The attributes of a binary proxy object and of its type. */
export const B = { name: 1000, dataType: 1001, proxyType: 5009, md5: 11000, fileName: 11001, extension: 11005 } as const;

/** pageSize is the grid's page (Delivery take). */
export const pageSize = 60;

/** maxSearch bounds the search text the studio sends. */
export const maxSearch = 200;

/** MediaItem is one BPO as the grid shows it. */
export interface MediaItem {
  id: number;
  name: string;
  md5: string;
  extension: string;
  fileName: string;
}

/** fileNameOf is the download name of a file: its stored name, else the object's name plus the extension. */
export function fileNameOf(it: Pick<MediaItem, "name" | "extension" | "fileName">): string {
  if (it.fileName) return it.fileName;
  const base = it.name || "file";
  return it.extension && !base.toLowerCase().endsWith(it.extension) ? base + it.extension : base;
}

/** isImage: the files Delivery makes thumbnails of. */
export function isImage(extension: string): boolean {
  return [".png", ".jpg", ".jpeg", ".gif", ".webp"].includes(extension.toLowerCase());
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** itemOfDelivery reads a Delivery object (props=1: the binary attributes by their ApiIdentifiers). */
export function itemOfDelivery(o: ApiObject): MediaItem {
  const p = o.props ?? {};
  return {
    id: o.meta?.id ?? 0,
    name: o.displayName || str(p.attributeName),
    md5: str(p.externalBinaryMD5),
    extension: str(p.externalBinaryFileExtension),
    fileName: str(p.externalBinaryFileName),
  };
}

/** isProxyType: a type whose objects are binary proxy objects. */
export function isProxyType(t: TypeInfo): boolean {
  return values(t.object, B.proxyType).some((v) => v.value === true);
}

/** quoted writes a filter value as the filter syntax reads it: bare when plain, else in double quotes. */
function quoted(v: string): string {
  return /^[\p{L}\p{N}._-]+$/u.test(v) ? v : JSON.stringify(v);
}

/** mediaFilter is the Delivery filter of a search: the name's words and the file type ("" = none). */
export function mediaFilter(q: string, extension: string): string {
  const parts: string[] = [];
  const words = q.trim().slice(0, maxSearch);
  if (words) parts.push(`displayName:${quoted(words)}`);
  if (extension) parts.push(`externalBinaryFileExtension=${quoted(extension)}`);
  return parts.join("&&");
}

/** bpoRows are the values of a new BPO (name in the UI language, file name, content) or of a replaced file. */
export function bpoRows(file: Stored, fileName: string, name?: string, language = 201): CmsValue[] {
  const row = (attribute: number, value: unknown, lang = 0): CmsValue => ({ attribute, language: lang, variant: 0, value });
  const rows = name !== undefined ? [row(B.name, name, language)] : [];
  rows.push(row(B.md5, file.guid), row(B.extension, file.extension), row(B.fileName, fileName));
  return rows;
}

/** nameOfFile is the object name a file gets: its name without the extension. */
export function nameOfFile(fileName: string, extension: string): string {
  return extension && fileName.toLowerCase().endsWith(extension) ? fileName.slice(0, -extension.length) || fileName : fileName;
}

/** loadMediaTypes are the branch's BPO types. */
export async function loadMediaTypes(branch: string, preferred: readonly number[], signal?: AbortSignal): Promise<TypeInfo[]> {
  return (await loadTypes(branch, preferred, signal)).filter(isProxyType);
}

/** loadPage reads a page of a BPO type's objects matching the search. */
export async function loadPage(branch: string, type: string, q: string, extension: string, skip: number, minVersion?: number, signal?: AbortSignal):
  Promise<{ items: MediaItem[]; more: boolean }> {
  const filter = mediaFilter(q, extension);
  const { data } = await api.call("delivery", "ListTyped",
    { branch, type, skip, take: pageSize, props: 1, deleted: false, sort: "meta.id desc", ...(filter ? { filter } : {}) },
    undefined, { signal, minVersion });
  return { items: (data.objs ?? []).map(itemOfDelivery), more: !!data.more };
}

/** fileTypes are the extensions the type's objects have, most used first. */
export async function fileTypes(branch: string, type: string, signal?: AbortSignal): Promise<string[]> {
  const { data } = await api.call("delivery", "OccurrencesTyped",
    { branch, type, fields: "externalBinaryFileExtension", deleted: false }, undefined, { signal });
  const occ = data.occurrences?.externalBinaryFileExtension?.valueOccurrences ?? [];
  return occ
    .filter((o) => typeof o.value === "string" && o.value !== "")
    .sort((a, b) => (b.count ?? 0) - (a.count ?? 0) || String(a.value).localeCompare(String(b.value)))
    .map((o) => String(o.value));
}

/** send is the transport of uploads: one multipart request per chunk, Extension and Commit before File. */
export async function send(req: ChunkRequest): Promise<FileUploadResult> {
  const f = new FormData();
  if (req.token === null) f.append("Extension", req.extension);
  f.append("Commit", req.commit ? "true" : "false");
  f.append("File", req.data, "chunk");
  const path = req.token === null ? "/apis/cms/v1/fileUpload" : `/apis/cms/v1/fileUpload/${encodeURIComponent(req.token)}`;
  const { data } = await api.form<FileUploadResult>(req.token === null ? "POST" : "PUT", path, f, { signal: req.signal });
  return data;
}

/** removeUpload cancels an upload the server holds. */
export function removeUpload(token: string) {
  return api.call("management", "DeleteTempFile", { token });
}

/** createBpo creates a BPO of type for a stored file; its id and the transaction. */
export async function createBpo(branch: string, type: number, file: Stored, fileName: string, language: number): Promise<{ id: number; tx: number }> {
  const { data } = await api.call("management", "CreateObjects", { branch }, {
    objects: [{ meta: { typeRef: type }, values: bpoRows(file, fileName, nameOfFile(fileName, file.extension), language) }],
  });
  return { id: Number(data.createdObjectIds?.[0] ?? 0), tx: Number(data.transaction?.id ?? 0) };
}

/** replaceFile points a BPO at another stored file (If-Match: the ETag read when it was opened); the transaction. */
export async function replaceFile(branch: string, id: number, file: Stored, fileName: string): Promise<number> {
  const cur = await api.call("management", "GetObject", { branch, id: String(id) });
  const { data } = await api.call("management", "UpdateObjects", { branch }, {
    objects: [{ meta: { id }, values: bpoRows(file, fileName) }],
  }, cur.etag ? { ifMatch: cur.etag } : {});
  return Number(data.transaction?.id ?? 0);
}

/** download fetches the file with the token and saves it under its name. */
export async function download(it: MediaItem): Promise<void> {
  const blob = await api.blob("management", "GetFile", { name: it.md5 + it.extension });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = fileNameOf(it);
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * thumbnail is a blob: URL of a BPO's thumbnail (the caller revokes it);
 * null: it has none. Revalidated (ETag, 304): its address names the
 * object, not the content, which Replace file changes.
 */
export async function thumbnail(branch: string, id: number, size: number, signal: AbortSignal): Promise<string | null> {
  try {
    return URL.createObjectURL(await api.blob("delivery", "GetBpoThumbnail", { branch, id: String(id), size }, { signal, cache: "no-cache" }));
  } catch (e) {
    if (signal.aborted) throw e;
    return null;
  }
}

/** BinRefAttribute is a file reference attribute: its ApiIdentifier (what Delivery names it by) and its name. */
export interface BinRefAttribute {
  api: string;
  name: string;
}

/** binRefAttributes are the branch's BinRef attributes with an ApiIdentifier (what may point at a BPO). */
export function binRefAttributes(attrs: readonly CmsObject[], preferred: readonly number[] = [201]): BinRefAttribute[] {
  return attrs
    .filter((o) => !o.meta?.deleted && values(o, B.dataType).some((v) => v.value === "BinRef") && o.meta?.apiIdentifier)
    .map((o) => {
      const api = o.meta?.apiIdentifier ?? "";
      const named = values(o, B.name).some((v) => typeof v.value === "string" && v.value !== "");
      return { api, name: named ? displayName(o, preferred) : api };
    })
    .sort((a, b) => a.api.localeCompare(b.api));
}

const binRefs = new Map<string, Promise<BinRefAttribute[]>>();

async function loadBinRefs(branch: string, preferred: readonly number[]): Promise<BinRefAttribute[]> {
  const all: CmsObject[] = [];
  let next: string | undefined;
  for (let page = 0; page < 20; page++) {
    const { data } = await api.call("management", "GetTypedObjects",
      { branch, type: "10", inherited: true, deleted: false, take: 1000, continue: next, attributes: "1000,1001" });
    all.push(...(data.objects ?? []));
    next = data.continue || undefined;
    if (!next) break;
  }
  return binRefAttributes(all, preferred);
}

/** Usage is one object that refers to a BPO, and through which attributes. */
export interface Usage {
  id: number;
  name: string;
  typeRef: number;
  attributes: string[];
}

/** usagesOf reads a Delivery answer with reverse references: the referring objects, by id, with the attributes' names. */
export function usagesOf(obj: ApiObject | undefined, refs: readonly ApiObject[], attrs: readonly BinRefAttribute[] = []): Usage[] {
  const by = new Map<number, Usage>();
  const named = new Map(refs.map((r) => [r.meta?.id ?? 0, r]));
  const attrName = new Map(attrs.map((a) => [a.api, a.name]));
  for (const [api, ids] of Object.entries(obj?.reverse ?? {})) {
    if (!Array.isArray(ids)) continue;
    const attr = attrName.get(api) ?? api;
    for (const raw of ids) {
      const id = Number(raw);
      if (!Number.isFinite(id) || id <= 0) continue;
      const r = named.get(id);
      const u = by.get(id) ?? { id, name: r?.displayName || `#${id}`, typeRef: Number(r?.meta?.typeRef ?? 0), attributes: [] };
      if (!u.attributes.includes(attr)) u.attributes.push(attr);
      by.set(id, u);
    }
  }
  return [...by.values()].sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
}

/** whereUsed lists the objects whose BinRef values name the BPO (the branch's attributes read once per page and language). */
export async function whereUsed(branch: string, id: number, preferred: readonly number[], minVersion?: number, signal?: AbortSignal): Promise<Usage[]> {
  const key = `${branch}\u0000${preferred.join(",")}`;
  let attrs = binRefs.get(key);
  if (!attrs) {
    attrs = loadBinRefs(branch, preferred);
    binRefs.set(key, attrs);
    attrs.catch(() => binRefs.delete(key));
  }
  const list = await attrs;
  if (list.length === 0) return [];
  const { data } = await api.call("delivery", "Get",
    { branch, id: String(id), resolveReverse: list.map((a) => a.api).join(","), resolveReverseDepth: 1, deleted: false }, undefined, { signal, minVersion });
  return usagesOf(data.obj, data.refs ?? [], list);
}
