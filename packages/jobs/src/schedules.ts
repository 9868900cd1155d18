import type { SchedulerEvent } from '@quire/apps';
import type { Executor, Queryable } from '@quire/db';
import { insertDoc, updateDoc, uuid7, type DocContext, type DocData } from '@quire/documents';
import { cronOf, EVENT_FREQUENCIES, isFrequency, nextRunAfter, queueOfFrequency, type Frequency } from './frequencies';
import { QUEUE_TIMEOUTS } from './queues';
import { timestampOf } from './timestamps';

/**
 * The scheduler (Frappe's scheduler_events): each tenant's "Scheduled Job Type" records, indexed
 * in `quire.job_schedules` by when they next run. Any number of workers tick; a due row is taken
 * by exactly one of them (FOR UPDATE SKIP LOCKED) and, in the same transaction, its job is written
 * and its next run moved past now: never twice for one period, and none lost to a restart (a run
 * missed while no worker ran happens once at the next tick, as in Frappe). A run whose previous
 * one is still queued or running is skipped (its jobId, `scheduled:<job type>`).
 */

/** The user scheduled jobs run as. */
export const SCHEDULER_USER = 'Administrator';

/** Frappe names a Scheduled Job Type by its method's last two parts (`queue.flush`). */
export function jobTypeName(method: string): string {
  return method.split('.').slice(-2).join('.');
}

interface ScheduleRow {
  jobType: string;
  method: string;
  queue: string;
  cron: string;
  stopped: boolean;
}

/** The index row of a Scheduled Job Type record; undefined when its frequency or cron format cannot be scheduled. */
function scheduleOf(doc: DocData): ScheduleRow | undefined {
  if (!isFrequency(doc.frequency) || typeof doc.name !== 'string' || typeof doc.method !== 'string') return undefined;
  let cron: string;
  try {
    cron = cronOf(doc.frequency, typeof doc.cron_format === 'string' ? doc.cron_format : null);
  } catch {
    return undefined;
  }
  return { jobType: doc.name, method: doc.method, queue: queueOfFrequency(doc.frequency), cron, stopped: Boolean(Number(doc.stopped ?? 0)) };
}

/** Keeps the index row of a saved Scheduled Job Type in step (its controller calls this in the save's transaction); a changed cron format restarts its count. */
export async function upsertSchedule(q: Queryable, tenant: string, doc: DocData, now = new Date()): Promise<void> {
  const row = scheduleOf(doc);
  if (!row) {
    if (typeof doc.name === 'string') await deleteSchedule(q, tenant, doc.name);
    return;
  }
  await q.query(
    `INSERT INTO quire.job_schedules ("tenant", "job_type", "method", "queue", "cron", "stopped", "next_run_at")
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT ("tenant", "job_type") DO UPDATE SET
       "method" = EXCLUDED."method", "queue" = EXCLUDED."queue", "stopped" = EXCLUDED."stopped", "cron" = EXCLUDED."cron",
       "next_run_at" = CASE WHEN quire.job_schedules."cron" = EXCLUDED."cron" THEN quire.job_schedules."next_run_at" ELSE EXCLUDED."next_run_at" END`,
    [tenant, row.jobType, row.method, row.queue, row.cron, row.stopped, timestampOf(nextRunAfter(row.cron, now))],
  );
}

export async function deleteSchedule(q: Queryable, tenant: string, jobType: string): Promise<void> {
  await q.query(`DELETE FROM quire.job_schedules WHERE "tenant" = $1 AND "job_type" = $2`, [tenant, jobType]);
}

/** The Scheduled Job Type records the apps' hooks declare (Frappe's sync_jobs): method, frequency, cron format. */
function declaredJobTypes(events: readonly SchedulerEvent[]): Map<string, { method: string; frequency: Frequency; cron_format: string | null }> {
  const out = new Map<string, { method: string; frequency: Frequency; cron_format: string | null }>();
  for (const e of events) {
    const frequency = e.event === 'cron' ? 'Cron' : EVENT_FREQUENCIES[e.event];
    if (!frequency) continue;
    out.set(jobTypeName(e.method), { method: e.method, frequency, cron_format: e.event === 'cron' ? (e.cron ?? null) : null });
  }
  return out;
}

/**
 * Brings a schema's Scheduled Job Types to what the apps declare (Frappe's sync_jobs): new ones
 * made, changed frequencies updated, `stopped` left as a System Manager set it, ones no hook
 * declares any more deleted. Records only: a release template has them too, and no index rows.
 */
export async function syncScheduledJobTypes(ctx: DocContext, events: readonly SchedulerEvent[]): Promise<void> {
  const meta = ctx.meta.get('Scheduled Job Type');
  if (!meta) return;
  const declared = declaredJobTypes(events);
  const { rows } = await ctx.db.query<DocData>(`SELECT "name", "method", "frequency", "cron_format", "stopped" FROM ${meta.table}`);
  const existing = new Map(rows.map((r) => [String(r.name), r]));
  for (const [name, want] of declared) {
    const have = existing.get(name);
    if (!have) await insertDoc(ctx, 'Scheduled Job Type', { ...want, stopped: 0 }, { installing: true, name });
    else if (have.method !== want.method || have.frequency !== want.frequency || (have.cron_format ?? null) !== want.cron_format) {
      await updateDoc(ctx, 'Scheduled Job Type', name, want, { installing: true });
    }
  }
  for (const name of existing.keys()) {
    if (!declared.has(name)) await ctx.db.query(`DELETE FROM ${meta.table} WHERE "name" = $1`, [name]);
  }
}

/**
 * A tenant's Scheduled Job Types as declared, and its index rows from its records as they now are
 * (a tenant restored or moved has records without rows). `ctx.db` is the migration's transaction.
 */
export async function syncSchedules(ctx: DocContext, events: readonly SchedulerEvent[]): Promise<void> {
  await syncScheduledJobTypes(ctx, events);
  const meta = ctx.meta.get('Scheduled Job Type');
  if (!meta) return;
  const now = new Date();
  const { rows: records } = await ctx.db.query<DocData>(`SELECT "name", "method", "frequency", "cron_format", "stopped" FROM ${meta.table}`);
  await ctx.db.query(`DELETE FROM quire.job_schedules WHERE "tenant" = $1 AND NOT ("job_type" = ANY($2::text[]))`, [
    ctx.tenant.name,
    records.map((r) => String(r.name)),
  ]);
  for (const r of records) await upsertSchedule(ctx.db, ctx.tenant.name, r, now);
}

/** The index rows of a new tenant whose records are the declared ones, untouched (a copy of the release template): no record is read. */
export async function indexDeclaredSchedules(q: Queryable, tenant: string, events: readonly SchedulerEvent[]): Promise<void> {
  const now = new Date();
  for (const [name, want] of declaredJobTypes(events)) await upsertSchedule(q, tenant, { name, ...want, stopped: 0 }, now);
}

/** Due schedules are taken this many at a time (one transaction each). */
const TICK_BATCH = 500;

/**
 * Enqueues every schedule due on this cluster and moves each past now; returns how many jobs it
 * wrote. Safe to run from every worker at once. The `paused` tenants' schedules (suspended or
 * read-only) are left due: what fell due meanwhile runs once when they are active again, as after
 * a time with no worker.
 */
export async function tickSchedules(db: Executor, now = new Date(), paused: readonly string[] = []): Promise<number> {
  let written = 0;
  for (;;) {
    const { taken, enqueued } = await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ tenant: string; job_type: string; method: string; queue: 'short' | 'default' | 'long'; cron: string }>(
        `SELECT "tenant", "job_type", "method", "queue", "cron" FROM quire.job_schedules
          WHERE NOT "stopped" AND "next_run_at" <= $1 AND "tenant" <> ALL($2::text[])
          ORDER BY "next_run_at" LIMIT ${TICK_BATCH} FOR UPDATE SKIP LOCKED`,
        [timestampOf(now), paused],
      );
      if (rows.length === 0) return { taken: 0, enqueued: 0 };
      const inserted = await tx.query(
        `INSERT INTO quire.jobs ("id", "tenant", "queue", "kind", "method", "user", "job_id", "timeout_s", "scheduled_job_type")
         SELECT u."id", u."tenant", u."queue", 'function', u."method", $6, 'scheduled:' || u."job_type", u."timeout_s", u."job_type"
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $7::int[]) AS u("id", "tenant", "queue", "method", "job_type", "timeout_s")
         ON CONFLICT ("tenant", "job_id") WHERE "job_id" IS NOT NULL AND "status" IN ('queued', 'started') DO NOTHING`,
        [
          rows.map(() => uuid7()),
          rows.map((r) => r.tenant),
          rows.map((r) => r.queue),
          rows.map((r) => r.method),
          rows.map((r) => r.job_type),
          SCHEDULER_USER,
          rows.map((r) => QUEUE_TIMEOUTS[r.queue]),
        ],
      );
      await tx.query(
        `UPDATE quire.job_schedules s SET "next_run_at" = u."next"
           FROM unnest($1::text[], $2::text[], $3::timestamp[]) AS u("tenant", "job_type", "next")
          WHERE s."tenant" = u."tenant" AND s."job_type" = u."job_type"`,
        [rows.map((r) => r.tenant), rows.map((r) => r.job_type), rows.map((r) => timestampOf(nextRunAfter(r.cron, now)))],
      );
      return { taken: rows.length, enqueued: inserted.rowCount };
    });
    written += enqueued;
    if (taken < TICK_BATCH) return written;
  }
}

/**
 * How late the scheduler is on this cluster: seconds since the earliest due run that no tick has
 * taken yet (0 when none is due). The `paused` tenants' runs wait on purpose and are not lateness.
 */
export async function schedulerLagSeconds(q: Queryable, paused: readonly string[] = []): Promise<number> {
  const { rows } = await q.query<{ lag: number | null }>(
    `SELECT EXTRACT(EPOCH FROM (clock_timestamp() at time zone 'utc') - min("next_run_at"))::float8 AS "lag"
       FROM quire.job_schedules WHERE NOT "stopped" AND "next_run_at" <= (clock_timestamp() at time zone 'utc') AND "tenant" <> ALL($1::text[])`,
    [paused],
  );
  return Math.max(0, rows[0]?.lag ?? 0);
}
