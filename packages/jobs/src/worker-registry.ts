import type { Queryable } from '@quire/db';
import { timestampOf } from './timestamps';

/**
 * `quire.job_workers`: the workers serving a cluster's jobs, as "RQ Worker" shows them. Each worker
 * process writes its row on every cluster it takes jobs from, at most every HEARTBEAT_MS; a row
 * silent for WORKER_GONE_SECONDS is a worker that died (shown no more, deleted by the next sweep).
 */
export async function createWorkersTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE quire.job_workers (
    "name" text PRIMARY KEY,
    "hostname" text NOT NULL,
    "pid" integer NOT NULL,
    "queues" text NOT NULL,
    "started_at" timestamp(6) NOT NULL,
    "heartbeat_at" timestamp(6) NOT NULL,
    "running" integer NOT NULL DEFAULT 0,
    "finished" bigint NOT NULL DEFAULT 0,
    "failed" bigint NOT NULL DEFAULT 0,
    "working_seconds" double precision NOT NULL DEFAULT 0
  )`);
}

export const HEARTBEAT_MS = 10_000;
export const WORKER_GONE_SECONDS = 60;

/** What one worker process reports of itself. */
export interface WorkerReport {
  name: string;
  hostname: string;
  pid: number;
  queues: string;
  startedAt: Date;
  running: number;
  finished: number;
  failed: number;
  workingSeconds: number;
}

/** Counts what this process's runs did, for its heartbeat. */
export class WorkerStats {
  running = 0;
  finished = 0;
  failed = 0;
  workingSeconds = 0;
  readonly startedAt = new Date();

  ran(status: 'finished' | 'failed' | 'retried', seconds: number): void {
    if (status === 'finished') this.finished++;
    else this.failed++;
    this.workingSeconds += seconds;
  }
}

export async function heartbeat(q: Queryable, r: WorkerReport): Promise<void> {
  await q.query(
    `INSERT INTO quire.job_workers ("name", "hostname", "pid", "queues", "started_at", "heartbeat_at", "running", "finished", "failed", "working_seconds")
     VALUES ($1, $2, $3, $4, $5, (clock_timestamp() at time zone 'utc'), $6, $7, $8, $9)
     ON CONFLICT ("name") DO UPDATE SET "heartbeat_at" = EXCLUDED."heartbeat_at", "running" = EXCLUDED."running",
       "finished" = EXCLUDED."finished", "failed" = EXCLUDED."failed", "working_seconds" = EXCLUDED."working_seconds"`,
    [r.name, r.hostname, r.pid, r.queues, timestampOf(r.startedAt), r.running, r.finished, r.failed, r.workingSeconds],
  );
  await q.query(`DELETE FROM quire.job_workers WHERE "heartbeat_at" < (clock_timestamp() at time zone 'utc') - make_interval(secs => $1::float8)`, [
    WORKER_GONE_SECONDS * 10,
  ]);
}

export async function removeWorker(q: Queryable, name: string): Promise<void> {
  await q.query(`DELETE FROM quire.job_workers WHERE "name" = $1`, [name]);
}

/** "RQ Worker": Frappe's fields, for the live workers of a cluster. */
export interface WorkerRecord {
  name: string;
  worker_name: string;
  status: 'busy' | 'idle';
  pid: number;
  queue: string;
  queue_type: string;
  current_job_id: null;
  successful_job_count: number;
  failed_job_count: number;
  total_working_time: number;
  birth_date: string;
  last_heartbeat: string;
}

const SELECT_WORKERS = `SELECT "name", "name" AS "worker_name", CASE WHEN "running" > 0 THEN 'busy' ELSE 'idle' END AS "status", "pid",
    "queues" AS "queue", "queues" AS "queue_type", NULL AS "current_job_id",
    "finished"::int AS "successful_job_count", "failed"::int AS "failed_job_count", "working_seconds" AS "total_working_time",
    to_char("started_at", 'YYYY-MM-DD HH24:MI:SS.US') AS "birth_date", to_char("heartbeat_at", 'YYYY-MM-DD HH24:MI:SS.US') AS "last_heartbeat"
  FROM quire.job_workers WHERE "heartbeat_at" >= (clock_timestamp() at time zone 'utc') - make_interval(secs => ${WORKER_GONE_SECONDS})`;

export async function liveWorkers(q: Queryable): Promise<WorkerRecord[]> {
  const { rows } = await q.query<WorkerRecord>(`${SELECT_WORKERS} ORDER BY "started_at", "name"`);
  return rows;
}

export async function liveWorker(q: Queryable, name: string): Promise<WorkerRecord | undefined> {
  const { rows } = await q.query<WorkerRecord>(`${SELECT_WORKERS} AND "name" = $1`, [name]);
  return rows[0];
}
