import type { LoadedApps, MethodContext } from '@quire/apps';
import { docMethodOf } from '@quire/apps';
import type { Queryable } from '@quire/db';
import { getDoc } from '@quire/documents';
import { recordScheduledRun } from './scheduled-run';
import type { WorkerStats } from './worker-registry';

/** What running a job needs from the platform. */
export interface JobRunDeps {
  apps: LoadedApps;
  /**
   * The context a job of `tenant` runs with, as `user` (the one who enqueued it), the same a
   * whitelisted method gets; undefined when the tenant or the user is gone.
   */
  contextFor(tenant: string, user: string): Promise<MethodContext | undefined>;
  /** This runner's name, recorded on the jobs it starts ("RQ Worker"). */
  worker: string;
  /** Told how each run ended, for metrics. */
  observe?: (queue: string, status: 'finished' | 'failed' | 'retried', seconds: number) => void;
  /** This process's counts, for its "RQ Worker" heartbeat. */
  stats?: WorkerStats;
}

interface StartedRow {
  tenant: string;
  queue: string;
  kind: 'function' | 'doc_method';
  method: string;
  reference_doctype: string | null;
  reference_name: string | null;
  /** JSON text (read as text whatever the driver does with jsonb). */
  kwargs: string;
  user: string;
  timeout_s: number;
  attempts: number;
  max_attempts: number;
  backoff_s: number;
  scheduled_job_type: string | null;
}

/** How a run that started ended. */
type Ended = 'finished' | 'failed' | 'retried';
/** How a run ended; `skipped`: the job had already ended or was canceled, nothing ran. */
export type RunOutcome = Ended | 'skipped';

/** Past its timeout a job's lease lasts this much longer: its runner records the timeout within it. */
const LEASE_MARGIN_SECONDS = 60;
/** What is kept of a failed job's error. */
const MAX_ERROR_CHARS = 4000;

class JobTimeout extends Error {
  constructor(seconds: number) {
    super(`Job exceeded the ${seconds} s timeout`);
    this.name = 'JobTimeoutException';
  }
}

/**
 * Runs one job of `quire.jobs` on the cluster `db`: starts it (only if it still waits or was left
 * started by a runner that died), calls its function with its tenant's and user's context under the
 * job's timeout, and records how it ended. A failure with attempts left waits again for its backoff
 * (doubling from `backoff_s`), picked like any new job; the last one is `failed` with its error.
 *
 * A timed-out job is recorded failed at its timeout, but JavaScript cannot stop the function: it
 * runs on in the background until it returns (what it writes after that still lands).
 */
export async function runJob(db: Queryable, id: string, deps: JobRunDeps): Promise<RunOutcome> {
  const started = await startJob(db, id, deps.worker);
  if (!started) return 'skipped';
  const t0 = performance.now();
  if (deps.stats) deps.stats.running++;
  let outcome: Ended;
  let ctx: MethodContext | undefined;
  let failure: unknown;
  try {
    ctx = await deps.contextFor(started.tenant, started.user);
    if (!ctx) throw new Error(`The tenant ${started.tenant} or its user ${started.user} no longer exists`);
    await withTimeout(call(started, ctx, deps), started.timeout_s);
    await db.query(
      `UPDATE quire.jobs SET "status" = 'finished', "ended_at" = (clock_timestamp() at time zone 'utc'), "lease_until" = NULL, "error" = NULL WHERE "id" = $1`,
      [id],
    );
    outcome = 'finished';
  } catch (e) {
    failure = e;
    outcome = await recordFailure(db, id, started, e);
  }
  if (ctx && started.scheduled_job_type && outcome !== 'retried') {
    await recordScheduledRun(ctx.doc, started.scheduled_job_type, outcome === 'finished' ? undefined : errorText(failure)).catch(() => {});
  }
  const seconds = (performance.now() - t0) / 1000;
  if (deps.stats) {
    deps.stats.running--;
    deps.stats.ran(outcome, seconds);
  }
  deps.observe?.(started.queue, outcome, seconds);
  return outcome;
}

async function startJob(db: Queryable, id: string, worker: string): Promise<StartedRow | undefined> {
  const { rows } = await db.query<StartedRow>(
    `UPDATE quire.jobs SET "status" = 'started', "attempts" = "attempts" + 1, "worker" = $2,
            "started_at" = (clock_timestamp() at time zone 'utc'),
            "lease_until" = (clock_timestamp() at time zone 'utc') + make_interval(secs => "timeout_s" + ${LEASE_MARGIN_SECONDS})
      WHERE "id" = $1 AND "status" IN ('queued', 'started')
      RETURNING "tenant", "queue", "kind", "method", "reference_doctype", "reference_name", "kwargs"::text AS "kwargs", "user", "timeout_s", "attempts", "max_attempts", "backoff_s", "scheduled_job_type"`,
    [id, worker],
  );
  return rows[0];
}

async function call(job: StartedRow, ctx: MethodContext, deps: JobRunDeps): Promise<void> {
  if (job.kind === 'function') {
    const fn = deps.apps.functions.get(job.method);
    if (!fn) throw new Error(`No function named ${job.method}`);
    await fn(kwargsOf(job), ctx);
    return;
  }
  const doctype = job.reference_doctype ?? '';
  const m = docMethodOf(deps.apps, doctype, job.method);
  if (!m) throw new Error(`${doctype} has no document method ${job.method}`);
  const doc = await getDoc(ctx.doc, doctype, job.reference_name);
  await m.fn(doc, kwargsOf(job), ctx);
}

function kwargsOf(job: StartedRow): Record<string, unknown> {
  return JSON.parse(job.kwargs) as Record<string, unknown>;
}

async function recordFailure(db: Queryable, id: string, job: StartedRow, e: unknown): Promise<Ended> {
  const error = errorText(e);
  if (job.attempts < job.max_attempts) {
    const wait = job.backoff_s * 2 ** (job.attempts - 1);
    await db.query(
      `UPDATE quire.jobs SET "status" = 'queued', "dispatched_at" = NULL, "lease_until" = NULL, "error" = $2,
              "available_at" = (clock_timestamp() at time zone 'utc') + make_interval(secs => $3::float8)
        WHERE "id" = $1`,
      [id, error, wait],
    );
    return 'retried';
  }
  await db.query(
    `UPDATE quire.jobs SET "status" = 'failed', "ended_at" = (clock_timestamp() at time zone 'utc'), "lease_until" = NULL, "error" = $2 WHERE "id" = $1`,
    [id, error],
  );
  return 'failed';
}

/** The error as a failed job shows it: its type and message (no stack: the tenant sees this). */
function errorText(e: unknown): string {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return text.slice(0, MAX_ERROR_CHARS);
}

async function withTimeout(work: Promise<void>, seconds: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new JobTimeout(seconds)), seconds * 1000);
  });
  work.catch(() => {}); // its failure after the timeout has nobody to tell
  try {
    await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
