// Webhook definitions and their delivery log through the Management API
// (docs/webhooks.md). A definition is an object of type 210 on the default
// branch (4) with 1220 URL, 1221 secret (written, never returned), 1222
// branches, 1223 types, 1224 kinds (multi-valued; none = all) and 1225
// enabled; only administrators write them. The secret is made here, in the
// browser, shown once after the definition is created and never again (the
// API does not return it). The log is Webhook_GetWebhookDeliveries, a test
// Webhook_SendTestDelivery (administrators only; the studio offers the
// screen to those its account says are: auth/account).
import type { CmsObject, CmsValue, WebhookAttempt } from "../api/generated/management";
import { api } from "../auth/session";
import { values } from "./values";

export const typeWebhook = 210;
export const webhookBranch = "4";

/** The attributes of a definition. */
export const W = { name: 1000, url: 1220, secret: 1221, branches: 1222, types: 1223, kinds: 1224, enabled: 1225 } as const;

/** The kinds of change events a definition may filter on (pkg/changes). */
export const eventKinds = ["created", "updated", "deleted", "branchDeleted", "comment"] as const;

/** takeAttempts is the delivery log's page size. */
export const takeAttempts = 50;

export interface Webhook {
  id: number;
  name: string;
  url: string;
  branches: number[];
  types: number[];
  kinds: string[];
  enabled: boolean;
}

/** WebhookDraft is what the dialog edits; secret is set on create only. */
export interface WebhookDraft extends Omit<Webhook, "id"> {
  secret?: string | undefined;
}

function ordered(o: CmsObject, attribute: number): unknown[] {
  return values(o, attribute)
    .slice()
    .sort((a, b) => (a.sortReverse ?? 0) - (b.sortReverse ?? 0))
    .map((v) => v.value);
}

/** parseWebhook reads a definition (any language's name; the secret is never in it). */
export function parseWebhook(o: CmsObject, preferred: readonly number[] = [201]): Webhook {
  let name = "";
  for (const l of [...preferred, 0]) {
    const v = values(o, W.name, l)[0]?.value;
    if (typeof v === "string" && v) {
      name = v;
      break;
    }
  }
  if (!name) name = String(values(o, W.name).find((v) => typeof v.value === "string" && v.value)?.value ?? "");
  const url = values(o, W.url)[0]?.value;
  return {
    id: o.meta?.id ?? 0,
    name,
    url: typeof url === "string" ? url : "",
    branches: ordered(o, W.branches).filter((v): v is number => typeof v === "number"),
    types: ordered(o, W.types).filter((v): v is number => typeof v === "number"),
    kinds: ordered(o, W.kinds).filter((v): v is string => typeof v === "string"),
    enabled: values(o, W.enabled)[0]?.value === true,
  };
}

const row = (attribute: number, value: unknown, language = 0, sortReverse = 0): CmsValue => ({
  attribute, language, variant: 0, value, sortReverse,
});

/** listRows are the rows of a multi-valued attribute: the whole new list, or one null row that clears it. */
function listRows(attribute: number, list: readonly (number | string)[]): CmsValue[] {
  if (list.length === 0) return [row(attribute, null)];
  return list.map((v, i) => row(attribute, v, 0, i));
}

const same = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * webhookRows are the values of a draft. On create every setting is sent
 * (empty filters left out: none = all) and the secret; on update only what
 * changed, a cleared filter as one null row, and the secret never (it is
 * kept; the studio cannot read it back to compare).
 */
export function webhookRows(d: WebhookDraft, before?: Webhook): CmsValue[] {
  const out: CmsValue[] = [];
  const name = d.name.trim();
  if (!before || name !== before.name) out.push(row(W.name, name || null, 201));
  const url = d.url.trim();
  if (!before || url !== before.url) out.push(row(W.url, url));
  if (!before && d.secret) out.push(row(W.secret, d.secret));
  const lists: [number, readonly (number | string)[], readonly (number | string)[] | undefined][] = [
    [W.branches, d.branches, before?.branches],
    [W.types, d.types, before?.types],
    [W.kinds, d.kinds, before?.kinds],
  ];
  for (const [attribute, next, was] of lists) {
    if (was === undefined ? next.length > 0 : !same(next, was)) out.push(...listRows(attribute, next));
  }
  if (!before || d.enabled !== before.enabled) out.push(row(W.enabled, d.enabled));
  return out;
}

/** urlProblem says what is wrong with a receiver URL ("" = fine): absolute http(s) only, as the dispatcher sends. */
export function urlProblem(url: string): "" | "required" | "scheme" | "invalid" {
  const u = url.trim();
  if (!u) return "required";
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    return "invalid";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "scheme";
  if (!parsed.hostname) return "invalid";
  return "";
}

/** newSecret is a random secret of n bytes, hex (32 bytes: 64 characters), from the browser's CSPRNG. */
export function newSecret(n = 32, random: (b: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  const b = random(new Uint8Array(n));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/** Attempt is a log row as the screen shows it. */
export interface Attempt {
  id: number;
  deliveryId: string;
  kind: string;
  attempt: number;
  time: string;
  durationMs: number;
  status: number;
  error: string | null;
  outcome: string;
  test: boolean;
}

export function parseAttempt(a: WebhookAttempt): Attempt {
  return {
    id: a.id ?? 0,
    deliveryId: a.deliveryId ?? "",
    kind: a.kind ?? "",
    attempt: a.attempt ?? 1,
    time: a.time ?? "",
    durationMs: a.durationMs ?? 0,
    status: a.status ?? 0,
    error: a.error ?? null,
    outcome: a.outcome ?? "",
    test: a.kind === "test",
  };
}

/** formatDuration is a duration in ms as the log shows it: "0.4 ms", "12 ms", "1.3 s". */
export function formatDuration(ms: number, fmt: (n: number, digits: number) => string): string {
  if (ms < 10) return `${fmt(ms, 1)} ms`;
  if (ms < 1000) return `${fmt(Math.round(ms), 0)} ms`;
  return `${fmt(ms / 1000, 1)} s`;
}

/** mergePage appends a later page to the rows shown, dropping any already there (by id). */
export function mergePage(shown: readonly Attempt[], next: readonly Attempt[]): Attempt[] {
  const seen = new Set(shown.map((a) => a.id));
  return [...shown, ...next.filter((a) => !seen.has(a.id))];
}

const comment = (what: string) => `studio: ${what}`;

/** loadWebhooks reads the live definitions, by id. */
export async function loadWebhooks(preferred: readonly number[], signal?: AbortSignal): Promise<Webhook[]> {
  const out: Webhook[] = [];
  let next: string | undefined;
  for (let page = 0; page < 20; page++) {
    const { data } = await api.call("management", "GetTypedObjects",
      { branch: webhookBranch, type: String(typeWebhook), deleted: false, take: 1000, continue: next }, undefined, { signal });
    out.push(...(data.objects ?? []).map((o) => parseWebhook(o, preferred)));
    next = data.continue || undefined;
    if (!next) break;
  }
  return out.sort((a, b) => a.id - b.id);
}

/** createWebhook creates a definition with the draft's secret and returns its id. */
export async function createWebhook(d: WebhookDraft): Promise<number> {
  const { data } = await api.call("management", "CreateObjects", { branch: webhookBranch }, {
    comment: comment("new webhook"),
    objects: [{ meta: { typeRef: typeWebhook }, values: webhookRows(d) }],
  });
  const id = data.createdObjectIds?.[0];
  if (id === undefined) throw new Error("the API created no webhook");
  return id;
}

/** updateWebhook writes what changed; the secret stays. */
export async function updateWebhook(before: Webhook, d: WebhookDraft): Promise<void> {
  const rows = webhookRows(d, before);
  if (rows.length === 0) return;
  await api.call("management", "UpdateObjects", { branch: webhookBranch }, {
    comment: comment("change webhook"),
    objects: [{ meta: { id: before.id }, values: rows }],
  });
}

/** deleteWebhook deletes a definition (its log stays readable until pruned). */
export async function deleteWebhook(id: number): Promise<void> {
  await api.call("management", "DeleteObjects", { branch: webhookBranch }, { comment: comment("delete webhook"), objectIds: [String(id)] });
}

/** sendTest sends a test delivery now and returns its recorded attempt. */
export async function sendTest(id: number): Promise<Attempt> {
  const { data } = await api.call("management", "SendTestDelivery", { webhookId: id }, {});
  return parseAttempt(data);
}

export interface AttemptPage {
  attempts: Attempt[];
  next: string | undefined;
}

/** loadAttempts reads a page of a webhook's log, newest first. */
export async function loadAttempts(id: number, cont: string | undefined, signal?: AbortSignal): Promise<AttemptPage> {
  const { data } = await api.call("management", "GetWebhookDeliveries", { webhookId: id, take: takeAttempts, continue: cont }, undefined, { signal });
  return { attempts: (data.attempts ?? []).map(parseAttempt), next: data.continue || undefined };
}
