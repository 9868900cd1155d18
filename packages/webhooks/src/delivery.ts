import type { Database } from '@quire/db';
import type { DocContext, DocData } from '@quire/documents';
import { nextAttemptDelay, type RetryPolicy } from './backoff';
import type { AttemptResult, ClaimedEvent } from './events';
import { send, type SendResult } from './http-send';
import type { Cidr } from './net-guard';
import { frappeSignature, standardWebhookHeaders } from './signing';
import type { WebhookState, WebhookStates } from './webhook-state';

/**
 * One delivery attempt of one claimed outbox event: sign it (Frappe's X-Frappe-Webhook-Signature
 * and the Standard Webhooks headers), send it through the address guard, and judge the answer:
 * delivered, retry later (exponential backoff with jitter, Retry-After honoured), failed, or — for
 * a 410 — disable the webhook. What it returns is written afterwards, batched with other attempts'
 * (dispatcher.ts, request-log.ts): a Webhook Request Log row and the event's new state.
 */

export type Outcome = 'delivered' | 'retrying' | 'failed' | 'refused' | 'disabled' | 'cancelled';

export interface DeliveryObserver {
  attempted(report: { outcome: Outcome; durationMs: number; attempt: number; lagMs: number | undefined }): void;
}

/**
 * One Postgres cluster's outbox: its tenants' events are written to `quire.webhook_events` there,
 * in the same transaction as their changes, and are claimed, delivered and recorded there.
 */
export interface Outbox {
  /** The cluster's name (`default`: the platform's own database). */
  cluster: string;
  /** Its database as open now. */
  db: Database;
}

/** The name of the outbox `DeliveryDeps.db` is: the platform database, the cluster `default` (tenancy's DEFAULT_CLUSTER). */
export const PLATFORM_OUTBOX = 'default';

export interface DeliveryDeps {
  /** The platform database: the `default` cluster's outbox (the only one drained without `outboxes`). */
  db: Database;
  /**
   * Every cluster's outbox as registered now, `default` among them: asked at each sweep (clusters
   * are added at run time). One that cannot be opened is left out by the caller; one no longer
   * listed is drained no more. Without it only `db` is drained.
   */
  outboxes?: () => Promise<readonly Outbox[]>;
  /**
   * The outbox a tenant's events are written to (its cluster's), or undefined when this process does
   * not know the tenant (then every outbox is looked at). On the path of every wake-up: no query.
   */
  outboxOf?: (tenant: string) => Outbox | undefined;
  /** An Administrator context of a tenant, or undefined when the tenant is gone. */
  contextFor(tenant: string): Promise<DocContext | undefined>;
  /**
   * Tenants whose events wait (suspended or read-only: an attempt writes its Request Log into the
   * tenant); asked at every claim, so kept in memory. None when not given.
   */
  pausedTenants?: () => readonly string[];
  allow: readonly Cidr[];
  policy: RetryPolicy;
  /** How much longer than the request's own timeout a claim lasts. */
  leaseMarginMs: number;
  observer?: DeliveryObserver;
  userAgent?: string;
}

/** What one attempt did, ready for bookkeeping. */
export interface Attempted {
  event: ClaimedEvent;
  /** The tenant's context; undefined when the tenant is gone (the event is cancelled without a log row). */
  ctx: DocContext | undefined;
  /** This attempt's number (1 for the first). */
  attempt: number;
  outcome: Outcome;
  /** The event's new state. */
  result: AttemptResult;
  /** The Webhook Request Log fields of this attempt (none without a tenant). */
  log: DocData | undefined;
  /** When the response (or the refusal) came: the log row's creation. */
  at: string;
  durationMs: number;
  /** From the event's commit to this, its first attempt; undefined for a retry. */
  lagMs: number | undefined;
}

const MAX_LOGGED_RESPONSE = 4000;

function utcMillis(timestamp: string): number {
  return Date.parse(`${timestamp.replace(' ', 'T')}Z`);
}

function hasHeader(headers: Array<[string, string]>, name: string): boolean {
  return headers.some(([k]) => k.toLowerCase() === name);
}

function requestHeaders(e: ClaimedEvent, state: WebhookState, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!hasHeader(e.headers, 'content-type')) headers['Content-Type'] = 'application/json';
  headers['User-Agent'] = userAgent;
  const timestamp = Math.floor(Date.now() / 1000);
  if (state.secret) {
    headers['X-Frappe-Webhook-Signature'] = frappeSignature(state.secret, e.body);
    Object.assign(headers, standardWebhookHeaders(state.secret, e.id, timestamp, e.body));
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

function judge(policy: RetryPolicy, e: ClaimedEvent, result: SendResult, attempt: number): Judgement {
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
  const delay = nextAttemptDelay(policy, attempt, elapsed, retryAfter);
  const logOutcome = result.kind === 'error' && result.timedOut ? 'Timeout' : 'Failed';
  if (delay === undefined) return { outcome: 'failed', attempt: { status: 'failed', statusCode, error }, logOutcome, error };
  return { outcome: 'retrying', attempt: { status: 'pending', nextAttemptInMs: delay, statusCode, error }, logOutcome, error };
}

/** The Webhook Request Log fields of an attempt. */
function logFields(e: ClaimedEvent, attempt: number, headers: Record<string, string>, result: SendResult | undefined, verdict: Judgement): DocData {
  return {
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
  };
}

/**
 * One attempt of a claimed event. `now` gives the log row's timestamp (Frappe's datetime text).
 * Throws only when the webhook's state cannot be read (the event keeps its lease and is taken again
 * when it runs out).
 */
export async function attemptDelivery(deps: DeliveryDeps, states: WebhookStates, e: ClaimedEvent, now: () => string): Promise<Attempted> {
  const attempt = e.attempts + 1;
  const lagMs = e.attempts === 0 ? Math.max(0, Date.now() - utcMillis(e.created_at)) : undefined;
  const base = { event: e, attempt, lagMs };
  const ctx = await deps.contextFor(e.tenant);
  if (!ctx) {
    const result: AttemptResult = { status: 'cancelled', error: 'tenant not found' };
    return { ...base, ctx, outcome: 'cancelled', result, log: undefined, at: now(), durationMs: 0 };
  }
  // Clocks of this process and the database's may differ a little: a second's margin.
  const state = await states.get(ctx, e.webhook, utcMillis(e.created_at) + 1000);
  if (!state?.enabled) {
    const error = state ? 'The webhook is disabled' : 'The webhook no longer exists';
    const verdict: Judgement = { outcome: 'cancelled', attempt: { status: 'cancelled', error }, logOutcome: 'Failed', error };
    return { ...base, ctx, outcome: 'cancelled', result: verdict.attempt, log: logFields(e, attempt, {}, undefined, verdict), at: now(), durationMs: 0 };
  }
  const headers = requestHeaders(e, state, deps.userAgent ?? 'Quire-Webhooks/0.1');
  const sent = await send({ url: e.url, method: e.method, headers, body: e.body, timeoutMs: e.timeout_ms, allow: deps.allow });
  const verdict = judge(deps.policy, e, sent, attempt);
  if (verdict.outcome === 'disabled') states.disable(ctx, e.webhook);
  return {
    ...base,
    ctx,
    outcome: verdict.outcome,
    result: verdict.attempt,
    log: logFields(e, attempt, headers, sent, verdict),
    at: now(),
    durationMs: sent.durationMs,
  };
}
