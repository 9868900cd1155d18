import type { Database } from '@quire/db';
import { getPassword, insertDoc, setValues, type DocContext } from '@quire/documents';
import { nextAttemptDelay, type RetryPolicy } from './backoff';
import { claimEvent, recordAttempt, type AttemptResult, type OutboxEvent } from './events';
import { send, type SendResult } from './http-send';
import type { Cidr } from './net-guard';
import { frappeSignature, standardWebhookHeaders } from './signing';

/**
 * One delivery attempt of one outbox event: claim it (lease), sign it (Frappe's
 * X-Frappe-Webhook-Signature and the Standard Webhooks headers), send it through the address guard,
 * then — in one transaction — write a Webhook Request Log row and the event's new state: delivered,
 * retry later (exponential backoff with jitter, Retry-After honoured), or failed; a 410 disables
 * the webhook. The same code serves the BullMQ worker and the in-process runner.
 */

export type Outcome = 'delivered' | 'retrying' | 'failed' | 'refused' | 'disabled' | 'cancelled';

export interface DeliveryObserver {
  attempted(report: { outcome: Outcome; durationMs: number; attempt: number; lagMs: number | undefined }): void;
}

export interface DeliveryDeps {
  db: Database;
  /** An Administrator context of a tenant, or undefined when the tenant is gone. */
  contextFor(tenant: string): Promise<DocContext | undefined>;
  allow: readonly Cidr[];
  policy: RetryPolicy;
  /** How much longer than the request's own timeout a claim lasts. */
  leaseMarginMs: number;
  observer?: DeliveryObserver;
  userAgent?: string;
}

export interface DeliveryReport {
  /** `skipped`: not due, already taken by another process, or no longer pending. */
  outcome: Outcome | 'skipped';
  /** For `retrying`: when the next attempt is due. */
  retryInMs?: number;
  /** For `retrying`: the attempts made so far (the next attempt's job id is keyed by it). */
  attempts?: number;
}

const MAX_LOGGED_RESPONSE = 4000;

function utcMillis(timestamp: string): number {
  return Date.parse(`${timestamp.replace(' ', 'T')}Z`);
}

function hasHeader(headers: Array<[string, string]>, name: string): boolean {
  return headers.some(([k]) => k.toLowerCase() === name);
}

interface WebhookState {
  enabled: boolean;
  security: boolean;
}

async function webhookState(ctx: DocContext, name: string): Promise<WebhookState | undefined> {
  const { rows } = await ctx.db.query<{ enabled: number; enable_security: number }>(
    `SELECT "enabled", "enable_security" FROM ${ctx.meta.require('Webhook').table} WHERE "name" = $1`,
    [name],
  );
  const row = rows[0];
  return row ? { enabled: row.enabled === 1, security: row.enable_security === 1 } : undefined;
}

async function requestHeaders(ctx: DocContext, e: OutboxEvent, state: WebhookState, userAgent: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (!hasHeader(e.headers, 'content-type')) headers['Content-Type'] = 'application/json';
  headers['User-Agent'] = userAgent;
  const timestamp = Math.floor(Date.now() / 1000);
  const secret = state.security ? await getPassword(ctx, 'Webhook', e.webhook, 'webhook_secret') : undefined;
  if (secret) {
    headers['X-Frappe-Webhook-Signature'] = frappeSignature(secret, e.body);
    Object.assign(headers, standardWebhookHeaders(secret, e.id, timestamp, e.body));
  } else {
    headers['webhook-id'] = e.id;
    headers['webhook-timestamp'] = String(timestamp);
  }
  for (const [k, v] of e.headers) headers[k] = v;
  return headers;
}

interface Judgement {
  outcome: Outcome;
  attempt: AttemptResult;
  logOutcome: 'Delivered' | 'Failed' | 'Refused' | 'Timeout';
  error?: string | undefined;
}

function judge(deps: DeliveryDeps, e: OutboxEvent, result: SendResult, attempt: number): Judgement {
  if (result.kind === 'refused') {
    return { outcome: 'refused', attempt: { status: 'failed', error: result.reason }, logOutcome: 'Refused', error: result.reason };
  }
  if (result.kind === 'response' && result.status >= 200 && result.status < 300) {
    return { outcome: 'delivered', attempt: { status: 'delivered', statusCode: result.status }, logOutcome: 'Delivered' };
  }
  if (result.kind === 'response' && result.status === 410) {
    const error = 'The receiver answered 410 Gone: the webhook is disabled';
    return { outcome: 'disabled', attempt: { status: 'failed', statusCode: 410, error }, logOutcome: 'Failed', error };
  }
  const error = result.kind === 'error' ? result.error : `HTTP ${result.status}`;
  const statusCode = result.kind === 'response' ? result.status : undefined;
  const retryAfter = result.kind === 'response' ? result.headers['retry-after'] : undefined;
  const elapsed = Date.now() - utcMillis(e.created_at);
  const delay = nextAttemptDelay(deps.policy, attempt, elapsed, retryAfter);
  const logOutcome = result.kind === 'error' && result.timedOut ? 'Timeout' : 'Failed';
  if (delay === undefined) return { outcome: 'failed', attempt: { status: 'failed', statusCode, error }, logOutcome, error };
  return { outcome: 'retrying', attempt: { status: 'pending', nextAttemptInMs: delay, statusCode, error }, logOutcome, error };
}

export async function deliverEvent(deps: DeliveryDeps, id: string): Promise<DeliveryReport> {
  const e = await claimEvent(deps.db, id, deps.leaseMarginMs);
  if (!e) return { outcome: 'skipped' };
  const ctx = await deps.contextFor(e.tenant);
  if (!ctx) {
    await recordAttempt(deps.db, e.id, { status: 'cancelled', error: 'tenant not found' });
    return { outcome: 'cancelled' };
  }
  const attempt = e.attempts + 1;
  const lagMs = e.attempts === 0 ? Math.max(0, Date.now() - utcMillis(e.created_at)) : undefined;
  const state = await webhookState(ctx, e.webhook);
  if (!state?.enabled) {
    const error = state ? 'The webhook is disabled' : 'The webhook no longer exists';
    await finish(deps, ctx, e, attempt, {}, undefined, { outcome: 'cancelled', attempt: { status: 'cancelled', error }, logOutcome: 'Failed', error });
    deps.observer?.attempted({ outcome: 'cancelled', durationMs: 0, attempt, lagMs });
    return { outcome: 'cancelled' };
  }
  const headers = await requestHeaders(ctx, e, state, deps.userAgent ?? 'Quire-Webhooks/0.1');
  const result = await send({ url: e.url, method: e.method, headers, body: e.body, timeoutMs: e.timeout_ms, allow: deps.allow });
  const verdict = judge(deps, e, result, attempt);
  await finish(deps, ctx, e, attempt, headers, result, verdict);
  deps.observer?.attempted({ outcome: verdict.outcome, durationMs: result.durationMs, attempt, lagMs });
  return verdict.outcome === 'retrying'
    ? { outcome: 'retrying', retryInMs: verdict.attempt.nextAttemptInMs ?? 0, attempts: attempt }
    : { outcome: verdict.outcome };
}

/** The attempt's log row, the event's new state and (for a 410) the webhook's, in one transaction. */
async function finish(
  deps: DeliveryDeps,
  ctx: DocContext,
  e: OutboxEvent,
  attempt: number,
  headers: Record<string, string>,
  result: SendResult | undefined,
  verdict: Judgement,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const inTx: DocContext = { ...ctx, db: tx };
    await insertDoc(
      inTx,
      'Webhook Request Log',
      {
        webhook: e.webhook,
        event_id: e.id,
        reference_doctype: e.reference_doctype,
        reference_document: e.reference_name,
        user: e.user,
        url: e.url,
        headers: JSON.stringify(headers, null, 1),
        data: e.body,
        outcome: verdict.logOutcome,
        status_code: result?.kind === 'response' ? result.status : null,
        duration: result ? Math.round(result.durationMs) : 0,
        attempt,
        response: result?.kind === 'response' ? result.body.slice(0, MAX_LOGGED_RESPONSE) : null,
        error: verdict.error ?? null,
      },
      { ignorePermissions: true, ignoreLinks: true },
    );
    await recordAttempt(tx, e.id, verdict.attempt);
    if (verdict.outcome === 'disabled') {
      await setValues(tx, ctx.meta.require('Webhook'), e.webhook, { enabled: 0 });
    }
  });
}
