import type { Queryable } from '@quire/db';
import { ValidationError } from '@quire/errors';

/**
 * A tenant's jobs as Frappe's "RQ Job" shows them (job_id, job_name, queue, status, arguments,
 * timeout, time_taken, started_at, ended_at, exc_info), read from `quire.jobs` on its cluster: only
 * its own rows, whatever the filters say.
 */
export interface JobRecord {
  name: string;
  job_id: string;
  job_name: string;
  queue: string;
  status: string;
  arguments: string;
  timeout: number;
  time_taken: number | null;
  started_at: string | null;
  ended_at: string | null;
  exc_info: string | null;
  creation: string;
  modified: string;
}

/** The fields a list may filter or sort on, and their columns. */
const COLUMNS: Readonly<Record<string, string>> = {
  name: `"id"::text`,
  job_id: `"id"::text`,
  job_name: `"method"`,
  queue: `"queue"`,
  status: `"status"`,
  creation: `"created_at"`,
  modified: `coalesce("ended_at", "started_at", "created_at")`,
  started_at: `"started_at"`,
  ended_at: `"ended_at"`,
};

const SELECT = `SELECT "id"::text AS "name", "id"::text AS "job_id", "method" AS "job_name", "queue", "status",
    "kwargs"::text AS "arguments", "timeout_s" AS "timeout",
    extract(epoch FROM "ended_at" - "started_at")::float8 AS "time_taken",
    to_char("started_at", 'YYYY-MM-DD HH24:MI:SS.US') AS "started_at", to_char("ended_at", 'YYYY-MM-DD HH24:MI:SS.US') AS "ended_at",
    "error" AS "exc_info",
    to_char("created_at", 'YYYY-MM-DD HH24:MI:SS.US') AS "creation",
    to_char(coalesce("ended_at", "started_at", "created_at"), 'YYYY-MM-DD HH24:MI:SS.US') AS "modified"
  FROM quire.jobs`;

export interface JobFilter {
  field: string;
  operator: string;
  value: unknown;
}

export interface JobQuery {
  filters: readonly JobFilter[];
  /** `field asc|desc`; newest first by default. */
  orderBy?: string | undefined;
  start: number;
  /** 0: all (up to `max`). */
  pageLength: number;
  max: number;
}

function column(field: string): string {
  const c = COLUMNS[field];
  if (!c) throw new ValidationError(`RQ Job cannot be filtered or sorted by ${field}`, { title: 'Invalid Filter' });
  return c;
}

/** The WHERE of a tenant's jobs with `filters` (=, !=, in, not in, like), and its values. */
function where(tenant: string, filters: readonly JobFilter[]): { sql: string; values: unknown[] } {
  const values: unknown[] = [tenant];
  const parts = [`"tenant" = $1`];
  for (const f of filters) {
    const c = column(f.field);
    const op = f.operator.toLowerCase();
    if (op === '=' || op === '!=') {
      values.push(String(f.value));
      parts.push(`${c} ${op === '=' ? '=' : '<>'} $${values.length}`);
    } else if (op === 'in' || op === 'not in') {
      const list = Array.isArray(f.value) ? f.value : String(f.value).split(',');
      values.push(list.map((v) => String(v).trim()));
      parts.push(`${op === 'in' ? '' : 'NOT '}(${c} = ANY($${values.length}::text[]))`);
    } else if (op === 'like') {
      values.push(String(f.value));
      parts.push(`${c}::text LIKE $${values.length}`);
    } else {
      throw new ValidationError(`RQ Job filters support =, !=, in, not in and like, not ${f.operator}`, { title: 'Invalid Filter' });
    }
  }
  return { sql: parts.join(' AND '), values };
}

function orderOf(orderBy: string | undefined): string {
  if (!orderBy) return `"created_at" DESC, "id" DESC`;
  const [field = '', dir = 'desc'] = orderBy.trim().split(/\s+/);
  const d = dir.toLowerCase();
  if (d !== 'asc' && d !== 'desc') throw new ValidationError(`Invalid sort order ${orderBy}`, { title: 'Invalid Sort' });
  return `${column(field.replace(/^`?tabRQ Job`?\./, '').replace(/`/g, ''))} ${d.toUpperCase()}, "id" ${d.toUpperCase()}`;
}

export async function listTenantJobs(q: Queryable, tenant: string, query: JobQuery): Promise<JobRecord[]> {
  const w = where(tenant, query.filters);
  const limit = query.pageLength > 0 ? Math.min(query.pageLength, query.max) : query.max;
  const { rows } = await q.query<JobRecord>(
    `${SELECT} WHERE ${w.sql} ORDER BY ${orderOf(query.orderBy)} LIMIT ${limit} OFFSET ${Math.max(0, query.start)}`,
    w.values,
  );
  return rows;
}

export async function countTenantJobs(q: Queryable, tenant: string, filters: readonly JobFilter[]): Promise<number> {
  const w = where(tenant, filters);
  const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM quire.jobs WHERE ${w.sql}`, w.values);
  return rows[0]?.n ?? 0;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function getTenantJob(q: Queryable, tenant: string, id: string): Promise<JobRecord | undefined> {
  if (!UUID.test(id)) return undefined;
  const { rows } = await q.query<JobRecord>(`${SELECT} WHERE "tenant" = $1 AND "id" = $2`, [tenant, id]);
  return rows[0];
}

/** Deletes an ended job's record; a queued or running one must be canceled first. */
export async function deleteTenantJob(q: Queryable, tenant: string, id: string): Promise<void> {
  const { rowCount } = await q.query(`DELETE FROM quire.jobs WHERE "tenant" = $1 AND "id" = $2 AND "status" IN ('finished', 'failed', 'canceled')`, [
    tenant,
    id,
  ]);
  if (rowCount === 0) throw new ValidationError('A queued or running job cannot be deleted: cancel it first', { title: 'Not Allowed' });
}

/** Cancels a job that has not started (a running one finishes: JavaScript cannot stop it). */
export async function cancelTenantJob(q: Queryable, tenant: string, id: string): Promise<void> {
  const { rowCount } = await q.query(
    `UPDATE quire.jobs SET "status" = 'canceled', "ended_at" = (clock_timestamp() at time zone 'utc'), "lease_until" = NULL
      WHERE "tenant" = $1 AND "id" = $2 AND "status" = 'queued'`,
    [tenant, id],
  );
  if (rowCount === 0) throw new ValidationError('Only a queued job can be canceled', { title: 'Not Allowed' });
}

/**
 * Runs a failed or canceled job again: queued anew under the same id, its attempts counted from
 * zero (refused while another job with its jobId waits or runs).
 */
export async function retryTenantJob(q: Queryable, tenant: string, id: string): Promise<void> {
  const { rowCount } = await q.query(
    `UPDATE quire.jobs SET "status" = 'queued', "attempts" = 0, "dispatched_at" = NULL, "lease_until" = NULL, "started_at" = NULL, "ended_at" = NULL,
            "available_at" = (clock_timestamp() at time zone 'utc')
      WHERE "tenant" = $1 AND "id" = $2 AND "status" IN ('failed', 'canceled')
        AND NOT EXISTS (SELECT 1 FROM quire.jobs o WHERE o."tenant" = $1 AND o."job_id" = quire.jobs."job_id" AND o."status" IN ('queued', 'started'))`,
    [tenant, id],
  );
  if (rowCount === 0)
    throw new ValidationError('Only a failed or canceled job can be retried (and not while another with its job id waits or runs)', { title: 'Not Allowed' });
}
