import type { Queryable } from '@quire/db';
import type { JobQueueName } from '@quire/documents';

/** A job handed to a queue: what a runner needs to find it again. */
export interface PickedJob {
  id: string;
  tenant: string;
  atFront: boolean;
}

/**
 * Takes up to `limit` of a queue's waiting jobs on one cluster, fairly between tenants: each
 * tenant's jobs are ranked by how many of its jobs are already handed out (dispatched, not yet
 * ended) plus their place in its own line (`at_front` first, then oldest), and the lowest ranks
 * go first. A tenant with 2,000 jobs waiting therefore gets one turn like a tenant with one;
 * FIFO would put the newcomer after all 2,000.
 *
 * The tenants with waiting jobs are found by a loose index scan (one probe per tenant, not one
 * row per job), so a picking costs O(tenants waiting × limit), whatever their backlog. Picked
 * jobs are marked `dispatched_at` in the same statement; two pickers racing on one job: the
 * update's re-check after its row lock gives it to one of them. The `paused` tenants' jobs (suspended
 * or read-only) are passed over: they wait, and are picked once their tenant is active again.
 */
export async function pickFairly(q: Queryable, queue: JobQueueName, limit: number, paused: readonly string[] = []): Promise<PickedJob[]> {
  if (limit <= 0) return [];
  const { rows } = await q.query<{ id: string; tenant: string; at_front: boolean }>(
    `WITH RECURSIVE tenants AS (
       (SELECT "tenant" FROM quire.jobs
         WHERE "queue" = $1 AND "status" = 'queued' AND "dispatched_at" IS NULL
         ORDER BY "queue", "tenant" LIMIT 1)
       UNION ALL
       SELECT (SELECT j."tenant" FROM quire.jobs j
                WHERE j."queue" = $1 AND j."status" = 'queued' AND j."dispatched_at" IS NULL AND j."tenant" > t."tenant"
                ORDER BY j."queue", j."tenant" LIMIT 1)
         FROM tenants t WHERE t."tenant" IS NOT NULL
     ),
     ranked AS (
       SELECT c."id", c."rank" + COALESCE(busy."n", 0) AS "rank"
         FROM tenants t
         CROSS JOIN LATERAL (
           SELECT count(*) AS "n" FROM quire.jobs b
            WHERE b."queue" = $1 AND b."tenant" = t."tenant" AND b."dispatched_at" IS NOT NULL AND b."status" IN ('queued', 'started')
         ) busy
         CROSS JOIN LATERAL (
           SELECT w."id", row_number() OVER (ORDER BY w."at_front" DESC, w."id") AS "rank"
             FROM quire.jobs w
            WHERE w."queue" = $1 AND w."tenant" = t."tenant" AND w."status" = 'queued' AND w."dispatched_at" IS NULL
              AND w."available_at" <= (clock_timestamp() at time zone 'utc')
            ORDER BY w."at_front" DESC, w."id"
            LIMIT $2
         ) c
        WHERE t."tenant" IS NOT NULL AND t."tenant" <> ALL($3::text[])
        ORDER BY "rank", c."id"
        LIMIT $2
     )
     UPDATE quire.jobs j SET "dispatched_at" = (clock_timestamp() at time zone 'utc')
       FROM ranked
      WHERE j."id" = ranked."id" AND j."status" = 'queued' AND j."dispatched_at" IS NULL
     RETURNING j."id", j."tenant", j."at_front"`,
    [queue, limit, paused],
  );
  return rows.map((r) => ({ id: r.id, tenant: r.tenant, atFront: r.at_front }));
}

/**
 * Jobs handed to a queue that no runner holds any more: dispatched but not started for
 * `staleSeconds` (the queue lost them: Redis flushed, or the feeder died between marking and
 * handing over), or started with their lease run out (the runner died). They wait again, to be
 * picked like new ones (a job handed over twice runs once: BullMQ keeps one per id, and a runner
 * starts only a job still waiting).
 */
export async function releaseLost(q: Queryable, staleSeconds: number): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE quire.jobs SET "status" = 'queued', "dispatched_at" = NULL, "lease_until" = NULL
      WHERE ("status" = 'queued' AND "dispatched_at" < (clock_timestamp() at time zone 'utc') - make_interval(secs => $1::float8))
         OR ("status" = 'started' AND "lease_until" < (clock_timestamp() at time zone 'utc'))`,
    [staleSeconds],
  );
  return rowCount;
}

/** Per queue on one cluster: jobs due and waiting to start (not those waiting out a retry's backoff), and the oldest one's wait in seconds. */
export async function readBacklog(q: Queryable): Promise<Array<{ queue: string; depth: number; oldestAgeSeconds: number }>> {
  const { rows } = await q.query<{ queue: string; depth: string; oldest: number | null }>(
    `SELECT "queue", count(*) AS "depth",
            EXTRACT(EPOCH FROM (clock_timestamp() at time zone 'utc') - min("created_at"))::float8 AS "oldest"
       FROM quire.jobs WHERE "status" = 'queued' AND "available_at" <= (clock_timestamp() at time zone 'utc') GROUP BY "queue"`,
  );
  return rows.map((r) => ({ queue: r.queue, depth: Number(r.depth), oldestAgeSeconds: Math.max(0, r.oldest ?? 0) }));
}

/**
 * Finished and canceled jobs are kept an hour ("RQ Job" shows them; RQ keeps results minutes),
 * failed ones a week. At 10,000 tenants the `all` event alone ends 10,000 jobs a minute.
 */
export const KEEP_ENDED = { finishedHours: 1, failedHours: 7 * 24 } as const;

/** Deletes ended jobs past their keeping, in batches, at most `batches` of them (the next sweep comes back for the rest). */
export async function deleteEnded(q: Queryable, batch = 5000, batches = 20): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < batches; i++) {
    const n = await deleteEndedBatch(q, batch);
    deleted += n;
    if (n < batch) break;
  }
  return deleted;
}

async function deleteEndedBatch(q: Queryable, batch: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM quire.jobs WHERE "id" IN (
       SELECT "id" FROM quire.jobs
        WHERE "status" IN ('finished', 'failed', 'canceled')
          AND "ended_at" < (clock_timestamp() at time zone 'utc') - make_interval(hours => CASE WHEN "status" = 'failed' THEN $1::int ELSE $2::int END)
        LIMIT $3)`,
    [KEEP_ENDED.failedHours, KEEP_ENDED.finishedHours, batch],
  );
  return rowCount;
}
