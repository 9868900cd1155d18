import type { Transaction } from '@quire/db';
import type { TenantMeta } from '@quire/meta';
import { pythonJsonDumps } from '@quire/frappe-compat';
import { serializeDoc, uuid7, type DocController, type HookArgs } from '@quire/documents';
import { compileCondition } from './condition';
import { deferEvent, replaceEvent, type NewEvent } from './events';
import { renderTemplate } from './template';

/**
 * The outbox: when a document change matches an enabled webhook (DocType, event, condition), the
 * request it will send is built and written to `quire.webhook_events` inside the change's own
 * transaction — a rolled-back change sends nothing, a committed one is never lost. Within one
 * transaction a webhook fires once per document, with the document's last state (Frappe dedups
 * the same way). After commit, the platform wakes whatever delivers (ChangeNotifier.webhookEventsWritten).
 */

/** DocTypes whose changes never trigger webhooks (the webhook machinery itself). */
const SILENT = new Set(['Webhook', 'Webhook Header', 'Webhook Data', 'Webhook Request Log']);

/** The events a webhook can listen to, and the document hooks that raise them. */
export const WEBHOOK_EVENTS = ['after_insert', 'on_update', 'on_submit', 'on_cancel', 'on_trash', 'on_update_after_submit', 'on_change'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Timeouts are capped so a delivery lease (timeout + margin) stays under half a minute. */
export const MAX_TIMEOUT_SECONDS = 20;

interface WebhookDefinition {
  name: string;
  event: string;
  condition: string | null;
  request_url: string;
  is_dynamic_url: number;
  timeout: number | null;
  request_method: string | null;
  request_structure: string | null;
  webhook_json: string | null;
  headers: Array<[string, string]>;
  data: Array<{ fieldname: string; key: string }>;
}

interface TxMemo {
  webhooks: Map<string, Promise<WebhookDefinition[]>>;
  /** `${webhook}\0${docname}` -> event id written in this transaction */
  events: Map<string, string>;
  committed: string[];
}

const memos = new WeakMap<Transaction, TxMemo>();

function memoOf(args: HookArgs): TxMemo {
  const { tx, ctx } = args;
  let memo = memos.get(tx);
  if (!memo) {
    memo = { webhooks: new Map(), events: new Map(), committed: [] };
    memos.set(tx, memo);
    // One wake-up per transaction, with every event it wrote (the list fills until commit).
    ctx.changes.webhookEventsWritten(tx, ctx.tenant, memo.committed);
  }
  return memo;
}

/**
 * A tenant's enabled webhooks per DocType, read once per metadata load: saving or deleting a
 * Webhook counts as a metadata change (its controller says so), so every process drops these with
 * the TenantMeta they hang on — a write then costs no webhook queries at all.
 */
const webhooksByMeta = new WeakMap<TenantMeta, Map<string, Promise<WebhookDefinition[]>>>();

function cachedWebhooks(args: HookArgs, doctype: string): Promise<WebhookDefinition[]> {
  let byDoctype = webhooksByMeta.get(args.ctx.meta);
  if (!byDoctype) webhooksByMeta.set(args.ctx.meta, (byDoctype = new Map<string, Promise<WebhookDefinition[]>>()));
  let webhooks = byDoctype.get(doctype);
  if (!webhooks) {
    const loading = loadWebhooks(args, doctype);
    byDoctype.set(doctype, (webhooks = loading));
    loading.catch(() => byDoctype.delete(doctype));
  }
  return webhooks;
}

async function loadWebhooks(args: HookArgs, doctype: string): Promise<WebhookDefinition[]> {
  const { tx, ctx } = args;
  const webhookMeta = ctx.meta.get('Webhook');
  if (!webhookMeta) return [];
  const { rows } = await tx.query<Omit<WebhookDefinition, 'headers' | 'data'> & { webhook_docevent: string }>(
    `SELECT "name", "webhook_docevent", "condition", "request_url", "is_dynamic_url", "timeout", "request_method", "request_structure", "webhook_json"
     FROM ${webhookMeta.table} WHERE "webhook_doctype" = $1 AND "enabled" = 1`,
    [doctype],
    { prepare: true },
  );
  if (rows.length === 0) return [];
  const names = rows.map((r) => r.name);
  const headers = await tx.query<{ parent: string; key: string | null; value: string | null }>(
    `SELECT "parent", "key", "value" FROM ${ctx.meta.require('Webhook Header').table} WHERE "parenttype" = 'Webhook' AND "parent" = ANY($1::text[]) ORDER BY "idx"`,
    [names],
  );
  const data = await tx.query<{ parent: string; fieldname: string; key: string }>(
    `SELECT "parent", "fieldname", "key" FROM ${ctx.meta.require('Webhook Data').table} WHERE "parenttype" = 'Webhook' AND "parent" = ANY($1::text[]) ORDER BY "idx"`,
    [names],
  );
  return rows.map((r) => ({
    ...r,
    event: r.webhook_docevent,
    headers: headers.rows.flatMap((h): Array<[string, string]> => (h.parent === r.name && h.key && h.value ? [[h.key, h.value]] : [])),
    data: data.rows.filter((d) => d.parent === r.name).map((d) => ({ fieldname: d.fieldname, key: d.key })),
  }));
}

const conditions = new Map<string, (scope: { doc: Record<string, unknown> }) => boolean>();

function conditionHolds(source: string | null, doc: Record<string, unknown>): boolean {
  if (!source || !source.trim()) return true;
  let test = conditions.get(source);
  if (!test) {
    test = compileCondition(source);
    if (conditions.size > 1000) conditions.clear();
    conditions.set(source, test);
  }
  return test({ doc });
}

/** The request a webhook sends for a document: Frappe's body (json.dumps of the data) and URL. */
async function buildRequest(w: WebhookDefinition, doc: Record<string, unknown>): Promise<{ url: string; body: string }> {
  const url = w.is_dynamic_url ? (await renderTemplate(w.request_url, { doc })).trim() : w.request_url.trim();
  let data: unknown;
  if (w.request_structure === 'JSON') {
    const rendered = w.webhook_json ? await renderTemplate(w.webhook_json, { doc }) : '{}';
    try {
      data = JSON.parse(rendered) as unknown;
    } catch (e) {
      throw new Error(`The JSON request body is not valid JSON after rendering: ${(e as Error).message}`, { cause: e });
    }
  } else {
    data = Object.fromEntries(w.data.map((d) => [d.key, doc[d.fieldname] ?? null]));
  }
  return { url, body: pythonJsonDumps(data) };
}

async function capture(args: HookArgs, event: WebhookEvent): Promise<void> {
  const { tx, ctx, meta, doc, flags } = args;
  if (flags.installing || meta.istable || SILENT.has(meta.name)) return;
  const memo = memoOf(args);
  let pending = memo.webhooks.get(meta.name);
  if (!pending) memo.webhooks.set(meta.name, (pending = cachedWebhooks(args, meta.name)));
  const webhooks = (await pending).filter((w) => w.event === event);
  if (webhooks.length === 0) return;
  const asDict = serializeDoc(ctx.meta, meta, doc, { includeNulls: true }) as Record<string, unknown>;
  for (const w of webhooks) {
    let request: { url: string; body: string } | undefined;
    let error: string | undefined;
    try {
      if (!conditionHolds(w.condition, asDict)) continue;
      request = await buildRequest(w, asDict);
    } catch (e) {
      error = `Could not build the request: ${(e as Error).message}`;
    }
    const key = `${w.name}\0${String(doc.name)}`;
    const event_: NewEvent = {
      id: memo.events.get(key) ?? uuid7(),
      tenant: ctx.tenant.name,
      webhook: w.name,
      event,
      referenceDoctype: meta.name,
      referenceName: String(doc.name),
      user: ctx.principal.user,
      url: request?.url ?? w.request_url,
      method: w.request_method || 'POST',
      headers: w.headers,
      body: request?.body ?? '',
      timeoutMs: Math.min(Math.max(w.timeout || 5, 1), MAX_TIMEOUT_SECONDS) * 1000,
      ...(error ? { error } : {}),
    };
    if (memo.events.has(key) && (await replaceEvent(tx, event_))) continue;
    deferEvent(tx, event_);
    memo.events.set(key, event_.id);
    if (!error) memo.committed.push(event_.id);
  }
}

const on = (event: WebhookEvent) => (args: HookArgs) => capture(args, event);

/** The controller (for every DocType: the frappe app's `docEvents['*']`) that writes webhook events into the outbox. */
export const webhookCapture: DocController = {
  after_insert: on('after_insert'),
  on_update: on('on_update'),
  on_submit: on('on_submit'),
  on_cancel: on('on_cancel'),
  on_trash: on('on_trash'),
  on_update_after_submit: on('on_update_after_submit'),
  // Frappe raises on_change for every save but an insert.
  on_change: (args) => (args.previous === undefined ? Promise.resolve() : capture(args, 'on_change')),
};
