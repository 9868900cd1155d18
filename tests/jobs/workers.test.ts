import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { spawnQuire, type Spawned } from '../support/process';
import { call, startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';
import { enqueue, JOB_LAB, jobRow, noteTitles, waitForNote, waitForStatus } from './support';

/**
 * Jobs with Redis, as a cluster runs them: the API only enqueues (and wakes the workers through the
 * deployment's channel); `quire serve worker` processes run them through BullMQ. Fairness between
 * tenants on a backlog, a worker killed mid-job, the API killed right after the commit, a graceful
 * stop. A database and a Redis prefix of their own.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const prefix = `quire-test-jobs-${randomBytes(4).toString('hex')}`;
const running = new Set<Spawned>();
let database: FreshDatabase;
let server: TestServer;
let a: TestTenant;
let b: TestTenant;

const baseEnv = () => ({
  DATABASE_URL: database.url,
  REDIS_URL: redisUrl,
  WEBHOOK_QUEUE_PREFIX: prefix,
  QUIRE_APPS: `frappe,${JOB_LAB}`,
  JOBS_LOCK_MS: '1500',
  JOBS_SWEEP_INTERVAL_MS: '500',
  WORKER_CONCURRENCY: '8',
  PORT: '0',
});

async function start(service: 'api' | 'worker', env: Record<string, string> = {}): Promise<{ p: Spawned; port: number }> {
  const p = spawnQuire(['serve', service], { ...baseEnv(), ...env });
  running.add(p);
  const m = await p.waitFor(service === 'api' ? /listening on port (\d+)/ : /health on port (\d+)/, 60_000);
  return { p, port: Number(m[1]) };
}

async function stop(p: Spawned, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  const code = await p.stop(signal);
  running.delete(p);
  return code;
}

beforeAll(async () => {
  database = await freshDatabase();
  // This process serves the API only: with Redis it enqueues and wakes, never runs a job.
  server = await startTestServer({ databaseUrl: database.url, apps: [JOB_LAB], redis: { url: redisUrl, prefix } });
  a = await server.tenant('joba');
  b = await server.tenant('jobb');
}, 60_000);

afterAll(async () => {
  await Promise.all([...running].map((p) => p.stop('SIGKILL')));
  await server.close();
  await database.drop();
});

describe('background jobs on BullMQ workers', () => {
  it("takes tenants' jobs fairly: with 2,000 of one tenant's jobs queued, another's starts within a second of the worker starting", async () => {
    expect(await enqueue(a, { method: 'noop', count: 2000 })).toBe(2000);
    const other = await enqueue(b, { kwargs: { title: 'not behind the backlog' } });
    // Nothing runs them without a worker: the API does not.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { rows: before } = await server.db.query(`SELECT count(*)::int AS "n" FROM quire.jobs WHERE "status" <> 'queued' AND "scheduled_job_type" IS NULL`);
    expect(before[0]).toEqual({ n: 0 });

    const worker = await start('worker');
    await waitForStatus(server.db, other.id, 'finished', 30_000);
    const { rows } = await server.db.query<{ first: string; other: string; ahead: number }>(
      `SELECT min("started_at")::text AS "first",
              (SELECT "started_at"::text FROM quire.jobs WHERE "id" = $1) AS "other",
              (SELECT count(*)::int FROM quire.jobs WHERE "tenant" = $2 AND "started_at" < (SELECT "started_at" FROM quire.jobs WHERE "id" = $1)) AS "ahead"
         FROM quire.jobs`,
      [other.id, a.name],
    );
    const waitedMs = Date.parse(`${rows[0]!.other}Z`) - Date.parse(`${rows[0]!.first}Z`);
    expect(waitedMs).toBeLessThan(1000);
    expect(rows[0]!.ahead).toBeLessThan(40); // FIFO would have put 2,000 ahead of it
    await until(
      async () =>
        (await server.db.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM quire.jobs WHERE "status" = 'finished' AND "method" = 'job_lab.tasks.noop'`))
          .rows[0]!.n,
      (n) => n === 2000,
      60_000,
    );
    expect(await stop(worker.p)).toBe(0);
  }, 120_000);

  it('a worker killed with -9 in the middle of a job: the job runs again on another worker, once', async () => {
    const [one, two] = await Promise.all([start('worker'), start('worker')]);
    const job = await enqueue(a, { method: 'slow_note', kwargs: { title: 'survives a kill', ms: 3000 } });
    await waitForStatus(server.db, job.id, 'started');
    // Whichever worker took it is killed in the middle (its name is `<host>:<pid>`).
    const { rows } = await server.db.query<{ worker: string }>(`SELECT "worker" FROM quire.jobs WHERE "id" = $1`, [job.id]);
    const [holder, other] = rows[0]?.worker.endsWith(`:${one.p.child.pid}`) ? [one, two] : [two, one];
    await stop(holder.p, 'SIGKILL');
    const row = await waitForStatus(server.db, job.id, 'finished', 30_000);
    expect(row).toMatchObject({ status: 'finished', attempts: 2 });
    const { rows: after } = await server.db.query<{ worker: string }>(`SELECT "worker" FROM quire.jobs WHERE "id" = $1`, [job.id]);
    expect(after[0]?.worker).toMatch(new RegExp(`:${other.p.child.pid}$`));
    expect((await noteTitles(a)).filter((t) => t === 'survives a kill')).toHaveLength(1);
    expect(await stop(other.p)).toBe(0);
  }, 90_000);

  it('the API killed right after the commit: the job committed with the write still runs', async () => {
    const worker = await start('worker');
    const api = await start('api');
    const crashed = await call(`http://127.0.0.1:${api.port}`, a.name, 'POST', '/api/method/job_lab.api.enqueue_then_crash', {
      auth: a.auth,
      json: { title: 'outlives the api' },
    }).catch((e: unknown) => e);
    expect(crashed).toBeInstanceOf(Error); // the process died before answering
    expect(await api.p.stop()).toBeNull(); // killed (-9), not exited
    running.delete(api.p);
    await waitForNote(a, "outlives the api (the request's)");
    await waitForNote(a, 'outlives the api');
    expect(await stop(worker.p)).toBe(0);
  }, 90_000);

  it('a graceful stop lets the running job finish, then exits 0', async () => {
    const worker = await start('worker', { SHUTDOWN_TIMEOUT_MS: '10000' });
    const job = await enqueue(b, { method: 'slow_note', kwargs: { title: 'finished on the way out', ms: 6000 } });
    await waitForStatus(server.db, job.id, 'started');
    // RQ Worker: the live worker, busy with the job (a heartbeat within a second of turning busy).
    const pid = worker.p.child.pid;
    const mine = async () =>
      (
        (await b.call('GET', '/api/resource/RQ Worker', { query: { fields: '["worker_name","status","pid","queue"]' } })).body.data as Array<{ pid: number }>
      ).filter((w) => w.pid === pid);
    const busy = await until(mine, (list) => JSON.stringify(list).includes('"busy"'), 3500);
    expect(busy).toEqual([{ worker_name: expect.stringMatching(/:\d+$/), status: 'busy', pid, queue: 'short,default,long' }]);
    const metrics = await (await fetch(`http://127.0.0.1:${worker.port}/metrics`)).text();
    for (const name of [
      'quire_jobs_total',
      'quire_job_duration_seconds',
      'quire_jobs_queue_depth',
      'quire_jobs_oldest_age_seconds',
      'quire_scheduler_lag_seconds',
    ]) {
      expect(metrics, name).toContain(`# HELP ${name} `);
    }
    expect(metrics).toMatch(/^quire_scheduler_lag_seconds \d/m);
    expect(metrics).toMatch(/^quire_jobs_queue_depth\{queue="default"\} \d/m);
    expect((await jobRow(server.db, job.id))?.status).toBe('started'); // still running when the stop comes
    expect(await stop(worker.p, 'SIGTERM')).toBe(0);
    expect(await mine()).toEqual([]); // a stopped worker takes its row away
    const row = await waitForStatus(server.db, job.id, 'finished', 1000);
    expect(row).toMatchObject({ status: 'finished', attempts: 1 });
    await waitForNote(b, 'finished on the way out', 1000);
  }, 60_000);
});
