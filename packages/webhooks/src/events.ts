import type { Queryable, Transaction } from '@quire/db';

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

const INSERT_EVENT = `INSERT INTO quire.webhook_events ("id", "tenant", "webhook", "event", "reference_doctype", "reference_name", "user", "url", "method", "headers", "body", "timeout_ms", "status", "last_error")
     VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14)`;

function eventValues(e: NewEvent): unknown[] {
  return [
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
  ];
}

/** The event written with the change's own last statement (Transaction.defer): it commits with the change or not at all. */
export function deferEvent(tx: Transaction, e: NewEvent): void {
  tx.defer({ text: INSERT_EVENT, values: eventValues(e), table: 'webhook_events', row: `quire.webhook_events ${e.id}` });
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

/** An event taken for one delivery attempt, with the lease that proves it is still ours when its outcome is written. */
export interface ClaimedEvent extends OutboxEvent {
  /** `lease_until` as the claim set it (text, microseconds kept): the outcome is written only while it is unchanged. */
  lease: string;
}

const CLAIMED_COLUMNS = ['id', 'tenant', 'webhook', 'event', 'reference_doctype', 'reference_name', 'user', 'url', 'method', 'headers', 'body']
  .concat(['timeout_ms', 'status', 'attempts', 'created_at', 'first_attempt_at'])
  .map((c) => `e."${c}"`)
  .join(', ');

/**
 * Fair between tenants (the jobs' pick does the same, @quire/jobs fair-pick.ts): the tenants with
 * pending events are found by a loose index scan (one probe each, whatever their backlog); each
 * offers its oldest due events, at most what its share leaves it (`$3` held by this process at once,
 * less what it holds: `$4`/`$5`, tenants and counts), ranked by their place in its line plus what
 * it holds. The lowest ranks are taken: a tenant with 100,000 events waiting gets one turn like a
 * tenant with one. The paused tenants' (`$6`: suspended or read-only) wait.
 */
const CLAIM = `WITH RECURSIVE tenants AS (
       (SELECT "tenant" FROM quire.webhook_events WHERE "status" = 'pending' ORDER BY "tenant" LIMIT 1)
       UNION ALL
       SELECT (SELECT p."tenant" FROM quire.webhook_events p
                WHERE p."status" = 'pending' AND p."tenant" > t."tenant" ORDER BY p."tenant" LIMIT 1)
         FROM tenants t WHERE t."tenant" IS NOT NULL
     ),
     offered AS (
       SELECT c."id", c."next_attempt_at", c."place" + COALESCE(held."n", 0) AS "rank"
         FROM tenants t
         LEFT JOIN unnest($4::text[], $5::int[]) AS held("tenant", "n") ON held."tenant" = t."tenant"
         CROSS JOIN LATERAL (
           SELECT w."id", w."next_attempt_at", row_number() OVER (ORDER BY w."next_attempt_at") AS "place"
             FROM quire.webhook_events w
            WHERE w."status" = 'pending' AND w."tenant" = t."tenant" AND w."next_attempt_at" <= (clock_timestamp() at time zone 'utc')
              AND (w."lease_until" IS NULL OR w."lease_until" < (clock_timestamp() at time zone 'utc'))
            ORDER BY w."next_attempt_at"
            LIMIT $1
         ) c
        WHERE t."tenant" IS NOT NULL AND t."tenant" <> ALL($6::text[]) AND c."place" + COALESCE(held."n", 0) <= $3
        ORDER BY "rank", c."next_attempt_at"
        LIMIT $1
     ),
     due AS (
       -- By primary key (an array, not a join the planner may answer by scanning every pending event).
       SELECT e."id" FROM quire.webhook_events e
        WHERE e."id" = ANY(ARRAY(SELECT "id" FROM offered))
          AND e."status" = 'pending' AND (e."lease_until" IS NULL OR e."lease_until" < (clock_timestamp() at time zone 'utc'))
        FOR UPDATE SKIP LOCKED
     ),
     claimed AS (
       UPDATE quire.webhook_events AS e
          SET "lease_until" = (clock_timestamp() at time zone 'utc') + make_interval(secs => (e."timeout_ms" + $2) / 1000.0),
              "first_attempt_at" = COALESCE(e."first_attempt_at", clock_timestamp() at time zone 'utc')
         FROM due WHERE e."id" = due."id"
       RETURNING ${CLAIMED_COLUMNS}, e."lease_until"::text AS "lease"
     )
     -- In rank order: the dispatcher starts them in the order they come.
     SELECT c.* FROM claimed c JOIN offered o ON o."id" = c."id" ORDER BY o."rank", o."next_attempt_at"`;

/** What one tenant may hold in the claiming process, and what each holds now (claimed, not yet attempted or in its attempt). */
export interface TenantShares {
  max: number;
  held: ReadonlyMap<string, number>;
  /** Tenants whose events wait (suspended or read-only): passed over. */
  paused?: readonly string[];
}

/**
 * Takes up to `limit` events for one delivery attempt each, in one statement, fairly between tenants
 * (CLAIM) and oldest due first within each: they must be pending, due, and not leased by another
 * process; a tenant never gets more than `shares.max` held here; rows another process is claiming at
 * the same moment are skipped (SKIP LOCKED), so concurrent claimers never take the same event. The
 * lease outlives the request's own timeout by `leaseMarginMs`, after which anyone may take the event again.
 */
export async function claimDue(q: Queryable, limit: number, leaseMarginMs: number, shares: TenantShares): Promise<ClaimedEvent[]> {
  if (limit <= 0) return [];
  const { rows } = await q.query<ClaimedEvent>(
    CLAIM,
    [limit, leaseMarginMs, shares.max, [...shares.held.keys()], [...shares.held.values()], shares.paused ?? []],
    { prepare: true },
  );
  for (const row of rows) if (typeof row.headers === 'string') row.headers = JSON.parse(row.headers) as Array<[string, string]>;
  return rows;
}

/**
 * Gives claimed events back before their lease runs out (never attempted: this process could not get
 * to them), so that any process may take them at once; one that was meanwhile taken again is left alone.
 */
export async function releaseClaims(q: Queryable, claims: ReadonlyArray<Pick<ClaimedEvent, 'id' | 'lease'>>): Promise<void> {
  if (claims.length === 0) return;
  await q.query(
    `UPDATE quire.webhook_events AS e SET "lease_until" = NULL
     FROM unnest($1::uuid[], $2::timestamp[]) AS r("id", "lease") WHERE e."id" = r."id" AND e."lease_until" = r."lease"`,
    [claims.map((c) => c.id), claims.map((c) => c.lease)],
  );
}

export interface AttemptResult {
  status: 'pending' | 'delivered' | 'failed' | 'cancelled';
  /** When the next attempt is due (status pending). */
  nextAttemptInMs?: number;
  statusCode?: number | undefined;
  error?: string | undefined;
}

/** One attempt's outcome for `outcomesUpdate`: the event, the lease it was claimed under, what happened. */
export interface EventOutcome {
  id: string;
  lease: string;
  result: AttemptResult;
}

/**
 * The SQL that writes attempts' outcomes to their events (one more attempt made, the new status,
 * when the next attempt is due) from five parallel arrays — `$n` .. `$n+5`: ids, leases, statuses,
 * delays (ms), status codes, errors — for use as a CTE of a larger statement. Only events still under
 * the lease they were claimed with are written: one whose lease ran out and that another process
 * took again belongs to that process now.
 */
export function outcomesUpdate(n: number): string {
  return `UPDATE quire.webhook_events AS e SET "attempts" = e."attempts" + 1, "status" = r."status", "lease_until" = NULL,
       "next_attempt_at" = CASE WHEN r."status" = 'pending' THEN (clock_timestamp() at time zone 'utc') + make_interval(secs => r."delay_ms" / 1000.0) ELSE e."next_attempt_at" END,
       "last_status_code" = r."code", "last_error" = r."error",
       "delivered_at" = CASE WHEN r."status" = 'delivered' THEN clock_timestamp() at time zone 'utc' ELSE e."delivered_at" END
     FROM unnest($${n}::uuid[], $${n + 1}::timestamp[], $${n + 2}::text[], $${n + 3}::float8[], $${n + 4}::int[], $${n + 5}::text[])
       AS r("id", "lease", "status", "delay_ms", "code", "error")
     WHERE e."id" = r."id" AND e."lease_until" = r."lease"
     RETURNING e."id"`;
}

/** The six arrays `outcomesUpdate` reads. */
export function outcomesParams(outcomes: readonly EventOutcome[]): unknown[][] {
  return [
    outcomes.map((o) => o.id),
    outcomes.map((o) => o.lease),
    outcomes.map((o) => o.result.status),
    outcomes.map((o) => o.result.nextAttemptInMs ?? 0),
    outcomes.map((o) => o.result.statusCode ?? null),
    outcomes.map((o) => o.result.error ?? null),
  ];
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

/** Ended events (delivered, failed, cancelled) are kept a week after they were made: replay_event sends one again by its id meanwhile. */
export const KEEP_ENDED_EVENTS_MS = 7 * 24 * 3600 * 1000;

/** The smallest uuid7 made at `ms`: event ids are uuid7 (time first), so "made before" is a range of the primary key. */
function uuid7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/**
 * Deletes ended events made more than `keepMs` ago, `batch` at a time by primary key (no index of
 * their own, no scan of the table), at most `batches` of them: the next sweep comes back for the
 * rest. A pending one that old (retried for days) stays. Without this the outbox grows by every
 * event ever sent. Their Webhook Request Log rows, in the tenant's schema, are not touched.
 */
export async function deleteEndedEvents(q: Queryable, keepMs = KEEP_ENDED_EVENTS_MS, now = Date.now(), batch = 5000, batches = 20): Promise<number> {
  const before = uuid7Floor(now - keepMs);
  let deleted = 0;
  for (let i = 0; i < batches; i++) {
    const { rowCount } = await q.query(
      `DELETE FROM quire.webhook_events WHERE "id" IN (
         SELECT "id" FROM quire.webhook_events WHERE "id" < $1::uuid AND "status" <> 'pending' ORDER BY "id" LIMIT $2)`,
      [before, batch],
    );
    deleted += rowCount;
    if (rowCount < batch) break;
  }
  return deleted;
}
