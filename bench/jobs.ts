import path from 'node:path';
import type { DocContext } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';
import { createTenant } from '@quire/tenancy';
import { Redis } from 'ioredis';
import pg from 'pg';
import { percentile, recreateDatabase, ROOT, startProcess, type Started } from './support';

/**
 * `npm run bench -- jobs`: one `quire serve worker` process (BullMQ on Redis, WORKER_CONCURRENCY
 * as set, 8 by default), Postgres and Redis on this machine, the job_lab test app:
 *
 * 1. throughput: BENCH_JOBS (5,000) jobs queued, then a worker started; jobs per second from the
 *    first start to the last end, for a no-op job, then (another 5,000, another worker) for a job
 *    that writes one document.
 * 2. latency: jobs enqueued at BENCH_RATE (100/s) for BENCH_SECONDS (15 s) through the real
 *    enqueue path (a row committed, a wake-up published); enqueue-to-start p50/p99/max.
 * 3. a noisy neighbour: tenant A queues BENCH_BACKLOG (10,000) document-writing jobs at once while
 *    tenant B enqueues 5 a second; B's enqueue-to-start p50/p99/max beside phase 2's, and how long
 *    A's backlog took (FIFO would put each of B's jobs behind all of A's).
 */
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
const jobsCount = Number(process.env.BENCH_JOBS ?? 5000);
const rate = Number(process.env.BENCH_RATE ?? 100);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const backlog = Number(process.env.BENCH_BACKLOG ?? 10_000);
const database = 'quire_bench_jobs';
const prefix = 'quire-bench-jobs';
const JOB_LAB = path.join(ROOT, 'tests/fixtures/apps/job_lab');
const ADMIN = makePrincipal('Administrator', ['Administrator', 'System Manager']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (n: number) => Math.round(n * 10) / 10;

const databaseUrl = await recreateDatabase(database);
const redis = new Redis(redisUrl);
await redis.flushdb();
redis.disconnect();
const env = {
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  WEBHOOK_QUEUE_PREFIX: prefix,
  QUIRE_APPS: `frappe,${JOB_LAB}`,
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
};
// This process enqueues as the API would (its commits publish the wake-ups); it never runs a job.
const rt = await createRuntime({ config: loadRuntimeConfig({ ...process.env, ...env }), name: 'quire-bench' });
const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });

async function contextOf(name: string): Promise<DocContext> {
  await createTenant(rt.platform, { name });
  const tenant = rt.platform.tenants.get(name);
  if (!tenant) throw new Error(`tenant ${name} was not registered`);
  return rt.platform.context(tenant, ADMIN);
}
const a = await contextOf('bencha');
const b = await contextOf('benchb');

const enqueue = (ctx: DocContext, task: string, title = 'bench') =>
  rt.platform.jobs.enqueue(ctx, { kind: 'function', method: `job_lab.tasks.${task}` }, { kwargs: { title } });

async function enqueueMany(ctx: DocContext, task: string, n: number): Promise<void> {
  // One transaction per 500: what a method enqueueing in a loop inside a transaction writes.
  for (let done = 0; done < n; done += 500) {
    await ctx.db.transaction(async (tx) => {
      const inTx = { ...ctx, db: tx };
      for (let i = done; i < Math.min(n, done + 500); i++) await enqueue(inTx, task, `bench ${i}`);
    });
  }
}

async function waitForEnded(where: string, values: unknown[], n: number, timeoutMs = 600_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM quire.jobs WHERE "status" IN ('finished', 'failed') AND ${where}`, values);
    if ((rows[0]?.n ?? 0) >= n) return;
    if (Date.now() > until) throw new Error(`only ${rows[0]?.n} of ${n} jobs ended`);
    await sleep(100);
  }
}

/** Jobs per second over `where`'s jobs, first start to last end. */
async function throughput(where: string, values: unknown[]): Promise<{ jobs: number; seconds: number; per_second: number; failed: number }> {
  const { rows } = await db.query<{ n: number; secs: number; failed: number }>(
    `SELECT count(*)::int AS n, extract(epoch FROM max("ended_at") - min("started_at"))::float8 AS secs,
            count(*) FILTER (WHERE "status" = 'failed')::int AS failed
       FROM quire.jobs WHERE ${where}`,
    values,
  );
  const r = rows[0] ?? { n: 0, secs: NaN, failed: 0 };
  return { jobs: r.n, seconds: round1(r.secs), per_second: Math.round(r.n / r.secs), failed: r.failed };
}

/** Enqueue-to-start milliseconds of `where`'s jobs: p50, p99, max. */
async function startLatency(where: string, values: unknown[]): Promise<{ jobs: number; p50_ms: number; p99_ms: number; max_ms: number }> {
  const { rows } = await db.query<{ ms: number }>(
    `SELECT extract(epoch FROM "started_at" - "created_at")::float8 * 1000 AS ms FROM quire.jobs WHERE ${where} AND "started_at" IS NOT NULL ORDER BY 1`,
    values,
  );
  const ms = rows.map((r) => r.ms);
  return { jobs: ms.length, p50_ms: round1(percentile(ms, 0.5)), p99_ms: round1(percentile(ms, 0.99)), max_ms: round1(ms.at(-1) ?? NaN) };
}

async function paced(ctx: DocContext, task: string, perSecond: number, forSeconds: number, title: string): Promise<number> {
  const total = Math.round(perSecond * forSeconds);
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    await enqueue(ctx, task, `${title} ${i}`);
  }
  return total;
}

async function stopProcess(p: Started): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await exited;
}

let worker: Started | undefined;
try {
  const results: Record<string, unknown> = {};
  // Each kind queued whole while no worker runs, then run by a worker started for it alone.
  for (const task of ['noop', 'write_note']) {
    await enqueueMany(a, task, jobsCount);
    worker = await startProcess(['bin/quire.mjs', 'serve', 'worker'], { ...env, PORT: '0' }, /health on port (\d+)/);
    await waitForEnded(`"method" = $1`, [`job_lab.tasks.${task}`], jobsCount);
    results[task === 'noop' ? 'throughput_noop' : 'throughput_write_one_document'] = await throughput(`"method" = $1`, [`job_lab.tasks.${task}`]);
    if (task === 'noop') await stopProcess(worker);
  }

  const steady = await paced(a, 'noop', rate, seconds, 'steady');
  await waitForEnded(`"kwargs"->>'title' LIKE 'steady %'`, [], steady, 60_000);
  results[`enqueue_to_start_at_${rate}_per_s`] = await startLatency(`"kwargs"->>'title' LIKE 'steady %'`, []);

  const backlogStarted = Date.now();
  await enqueueMany(a, 'write_note', backlog);
  const quiet = await paced(b, 'noop', 5, seconds, 'neighbour');
  await waitForEnded(`"kwargs"->>'title' LIKE 'neighbour %'`, [], quiet, 60_000);
  results.other_tenant_beside_a_backlog = {
    backlog_jobs: backlog,
    other_tenant: await startLatency(`"kwargs"->>'title' LIKE 'neighbour %'`, []),
  };
  await waitForEnded(
    `"tenant" = 'bencha' AND "created_at" >= to_timestamp($1 / 1000.0) at time zone 'utc' AND "method" = 'job_lab.tasks.write_note'`,
    [backlogStarted],
    backlog,
  );
  (results.other_tenant_beside_a_backlog as Record<string, unknown>).backlog_drained_seconds = round1((Date.now() - backlogStarted) / 1000);
  console.log(JSON.stringify({ worker_concurrency: Number(process.env.WORKER_CONCURRENCY ?? 8), ...results }, null, 2));
} finally {
  if (worker) await stopProcess(worker);
  await db.end();
  await rt.close();
}
