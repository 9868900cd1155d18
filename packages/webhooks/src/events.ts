import type { Queryable } from '@quire/db';

/**
 * The outbox table (`quire.webhook_events`): one row per webhook event, written in the same
 * transaction as the document change that caused it. Delivery claims a row with a lease, so a
 * process that dies mid-delivery only delays it until the lease runs out.
 */

export interface OutboxEvent {
  id: string;
  tenant: string;
  webhook: string;
  event: string;
  reference_doctype: string;
  reference_name: string;
  user: string | null;
  url: string;
  method: string;
  headers: Array<[string, string]>;
  body: string;
  timeout_ms: number;
  status: 'pending' | 'delivered' | 'failed' | 'cancelled';
  attempts: number;
  created_at: string;
  first_attempt_at: string | null;
}

export interface NewEvent {
  id: string;
  tenant: string;
  webhook: string;
  event: string;
  referenceDoctype: string;
  referenceName: string;
  user: string;
  url: string;
  method: string;
  headers: Array<[string, string]>;
  body: string;
  timeoutMs: number;
  /** Set when the request could not be built (template error): the event is recorded as failed, never sent. */
  error?: string;
}

export async function insertEvent(q: Queryable, e: NewEvent): Promise<void> {
  await q.query(
    `INSERT INTO quire.webhook_events ("id", "tenant", "webhook", "event", "reference_doctype", "reference_name", "user", "url", "method", "headers", "body", "timeout_ms", "status", "last_error")
     VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14)`,
    [
      e.id,
      e.tenant,
      e.webhook,
      e.event,
      e.referenceDoctype,
      e.referenceName,
      e.user,
      e.url,
      e.method,
      JSON.stringify(e.headers),
      e.body,
      e.timeoutMs,
      e.error ? 'failed' : 'pending',
      e.error ?? null,
    ],
  );
}

/** Replaces the request of an event written earlier in the same transaction; false when it is gone. */
export async function replaceEvent(q: Queryable, e: NewEvent): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE quire.webhook_events SET "event" = $2, "url" = $3, "method" = $4, "headers" = $5::jsonb, "body" = $6, "timeout_ms" = $7,
       "status" = $8, "last_error" = $9 WHERE "id" = $1::uuid`,
    [e.id, e.event, e.url, e.method, JSON.stringify(e.headers), e.body, e.timeoutMs, e.error ? 'failed' : 'pending', e.error ?? null],
  );
  return rowCount > 0;
}

/**
 * Takes an event for one delivery attempt: it must be pending, due, and not leased by another
 * process. The lease outlives the request's own timeout, after which anyone may take it again.
 */
export async function claimEvent(q: Queryable, id: string, leaseMs: number): Promise<OutboxEvent | undefined> {
  const { rows } = await q.query<OutboxEvent>(
    `UPDATE quire.webhook_events
     SET "lease_until" = (clock_timestamp() at time zone 'utc') + make_interval(secs => ("timeout_ms" + $2) / 1000.0),
         "first_attempt_at" = COALESCE("first_attempt_at", clock_timestamp() at time zone 'utc')
     WHERE "id" = $1::uuid AND "status" = 'pending' AND "next_attempt_at" <= (clock_timestamp() at time zone 'utc')
       AND ("lease_until" IS NULL OR "lease_until" < (clock_timestamp() at time zone 'utc'))
     RETURNING "id", "tenant", "webhook", "event", "reference_doctype", "reference_name", "user", "url", "method", "headers", "body",
       "timeout_ms", "status", "attempts", "created_at", "first_attempt_at"`,
    [id, leaseMs],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (typeof row.headers === 'string') row.headers = JSON.parse(row.headers) as Array<[string, string]>;
  return row;
}

export interface AttemptResult {
  status: 'pending' | 'delivered' | 'failed' | 'cancelled';
  /** When the next attempt is due (status pending). */
  nextAttemptInMs?: number;
  statusCode?: number | undefined;
  error?: string | undefined;
}

export async function recordAttempt(q: Queryable, id: string, r: AttemptResult): Promise<void> {
  await q.query(
    `UPDATE quire.webhook_events SET "attempts" = "attempts" + 1, "status" = $2, "lease_until" = NULL,
       "next_attempt_at" = CASE WHEN $2 = 'pending' THEN (clock_timestamp() at time zone 'utc') + make_interval(secs => $3 / 1000.0) ELSE "next_attempt_at" END,
       "last_status_code" = $4, "last_error" = $5,
       "delivered_at" = CASE WHEN $2 = 'delivered' THEN clock_timestamp() at time zone 'utc' ELSE "delivered_at" END
     WHERE "id" = $1::uuid`,
    [id, r.status, r.nextAttemptInMs ?? 0, r.statusCode ?? null, r.error ?? null],
  );
}

export interface DueEvent {
  id: string;
  /** ms since the epoch. */
  dueAt: number;
  /** Attempts made so far: with the id, names the attempt that is due (queue job ids use it). */
  attempts: number;
}

/** Pending events whose attempt is due and that no live lease holds: what a sweep re-enqueues. */
export async function dueEvents(q: Queryable, limit: number): Promise<DueEvent[]> {
  const { rows } = await q.query<{ id: string; due_at: string | number; attempts: number }>(
    `SELECT "id", (extract(epoch FROM "next_attempt_at") * 1000)::bigint AS due_at, "attempts" FROM quire.webhook_events
     WHERE "status" = 'pending' AND "next_attempt_at" <= (clock_timestamp() at time zone 'utc')
       AND ("lease_until" IS NULL OR "lease_until" < (clock_timestamp() at time zone 'utc'))
     ORDER BY "next_attempt_at" LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ id: r.id, dueAt: Number(r.due_at), attempts: r.attempts }));
}

/** Milliseconds until the next pending event is due (for a sleeping runner), or undefined. */
export async function msUntilNextDue(q: Queryable): Promise<number | undefined> {
  const { rows } = await q.query<{ ms: number | null }>(
    `SELECT (extract(epoch FROM min("next_attempt_at") - (clock_timestamp() at time zone 'utc')) * 1000)::float8 AS ms
     FROM quire.webhook_events WHERE "status" = 'pending'`,
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? undefined : Math.max(0, ms);
}

/** How many events wait for delivery (due or scheduled). */
export async function pendingCount(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM quire.webhook_events WHERE "status" = 'pending'`);
  return rows[0]?.n ?? 0;
}

/** Seconds the oldest undelivered event has waited since it was written (0 with none): the backlog's age. */
export async function oldestPendingAgeSeconds(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ age: number | null }>(
    `SELECT EXTRACT(EPOCH FROM (clock_timestamp() at time zone 'utc') - min("created_at"))::float8 AS age FROM quire.webhook_events WHERE "status" = 'pending'`,
  );
  return Math.max(0, rows[0]?.age ?? 0);
}

/** Makes an event due again now (replay), whatever happened to it before. */
export async function replayEvent(q: Queryable, tenant: string, id: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE quire.webhook_events SET "status" = 'pending', "next_attempt_at" = clock_timestamp() at time zone 'utc', "lease_until" = NULL
     WHERE "id" = $1::uuid AND "tenant" = $2`,
    [id, tenant],
  );
  return rowCount > 0;
}
