import { randomBytes } from 'node:crypto';
import { nextRunAfter } from '@quire/jobs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { spawnQuire, type Spawned } from '../support/process';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';
import { JOB_LAB } from './support';

/**
 * The scheduler with two workers running: the job_lab app's `cron: * * * * *` event runs once per
 * tenant per period, never twice; a run missed while no worker ran happens once after a restart;
 * a System Manager stops and starts it through its Scheduled Job Type; runs are logged as Frappe
 * logs them. Periods are made to fall due by moving `next_run_at` (a minute per period would
 * make this file minutes long), with the tick's cron moved to once a year so that no real minute
 * falls due meanwhile; when periods fall is the cron arithmetic's, checked on its own.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const prefix = `quire-test-sched-${randomBytes(4).toString('hex')}`;
const JOB_TYPE = 'tasks.tick_note';
const running = new Set<Spawned>();
let database: FreshDatabase;
let server: TestServer;
let t: TestTenant;
/** The tick's Scheduled Job Type as the app declared it, before its cron was moved to once a year. */
let declared: Record<string, unknown>;

async function startWorker(): Promise<Spawned> {
  const p = spawnQuire(['serve', 'worker'], {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    WEBHOOK_QUEUE_PREFIX: prefix,
    QUIRE_APPS: `frappe,${JOB_LAB}`,
    JOBS_SWEEP_INTERVAL_MS: '200',
    JOBS_LOCK_MS: '1500',
  });
  running.add(p);
  await p.waitFor(/health on port (\d+)/, 60_000);
  return p;
}

async function stopWorker(p: Spawned): Promise<void> {
  expect(await p.stop('SIGTERM')).toBe(0);
  running.delete(p);
}

/** Scheduled runs of the tenant's tick (job rows), and the notes they wrote. */
async function runs(): Promise<{ jobs: number; notes: number }> {
  const jobs = await server.db.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM quire.jobs WHERE "tenant" = $1 AND "scheduled_job_type" = $2`, [
    t.name,
    JOB_TYPE,
  ]);
  const notes = await t.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'Job Note', filters: '[["title","=","tick"]]' } });
  return { jobs: jobs.rows[0]!.n, notes: Number(notes.body.message) };
}

/** Makes the tenant's tick due now, as if its minute had come. */
async function makeDue(): Promise<void> {
  await server.db.query(`UPDATE quire.job_schedules SET "next_run_at" = (now() at time zone 'utc') - interval '1 second' WHERE "tenant" = $1`, [t.name]);
}

async function settled(expected: number): Promise<{ jobs: number; notes: number }> {
  await until(runs, (r) => r.jobs >= expected && r.notes >= expected, 15_000);
  await new Promise((resolve) => setTimeout(resolve, 1000)); // every worker ticked several times meanwhile
  return runs();
}

beforeAll(async () => {
  database = await freshDatabase();
  server = await startTestServer({ databaseUrl: database.url, apps: [JOB_LAB], redis: { url: redisUrl, prefix } });
  t = await server.tenant('sched');
  declared = (await t.call('GET', `/api/resource/Scheduled Job Type/${JOB_TYPE}`)).body.data;
  // Once a year (next on 1 January): a run moves the next one months away, so only makeDue makes it due.
  const yearly = await t.call('PUT', `/api/resource/Scheduled Job Type/${JOB_TYPE}`, { json: { cron_format: '0 0 1 1 *' } });
  expect(yearly.status, yearly.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await Promise.all([...running].map((p) => p.stop('SIGKILL')));
  await server.close();
  await database.drop();
});

describe('the scheduler', () => {
  it('computes when a cron expression and each frequency next fire (UTC)', () => {
    const at = new Date('2026-11-28T10:15:30Z');
    expect(nextRunAfter('* * * * *', at).toISOString()).toBe('2026-11-28T10:16:00.000Z');
    expect(nextRunAfter('0 * * * *', at).toISOString()).toBe('2026-11-28T11:00:00.000Z');
    expect(nextRunAfter('0 0 * * *', at).toISOString()).toBe('2026-11-29T00:00:00.000Z');
    expect(nextRunAfter('*/5 * * * *', at).toISOString()).toBe('2026-11-28T10:20:00.000Z');
  });

  it('every tenant has the Scheduled Job Types its apps declare', () => {
    expect(declared).toMatchObject({ name: JOB_TYPE, method: 'job_lab.tasks.tick_note', frequency: 'Cron', cron_format: '* * * * *', stopped: 0 });
  });

  it('with two workers running, each period runs once per tenant, never twice', async () => {
    const [one, two] = await Promise.all([startWorker(), startWorker()]);
    const before = await runs();
    for (let period = 1; period <= 3; period++) {
      await makeDue();
      const due = await until(
        async () =>
          (await server.db.query<{ next: string }>(`SELECT "next_run_at"::text AS "next" FROM quire.job_schedules WHERE "tenant" = $1`, [t.name])).rows[0]!
            .next,
        (next) => Date.parse(`${next}Z`) > Date.now() - 1000,
      );
      expect(Date.parse(`${due}Z`)).toBeGreaterThan(Date.now() - 1000); // moved past now by the run that took it
      const after = await settled(before.jobs + period);
      expect(after).toEqual({ jobs: before.jobs + period, notes: before.notes + period });
    }
    const type = await t.call('GET', `/api/resource/Scheduled Job Type/${JOB_TYPE}`);
    expect(type.body.data.last_execution).toEqual(expect.any(String));
    await Promise.all([stopWorker(one), stopWorker(two)]);
  }, 120_000);

  it('a run missed while no worker ran happens once after a restart', async () => {
    const before = await runs();
    await makeDue(); // its minute came while every worker was down
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await runs()).toEqual(before);
    const worker = await startWorker();
    expect(await settled(before.jobs + 1)).toEqual({ jobs: before.jobs + 1, notes: before.notes + 1 });
    await stopWorker(worker);
  }, 90_000);

  it('a System Manager stops and starts it; runs of a type with Create Log are logged', async () => {
    const worker = await startWorker();
    const stop = await t.call('PUT', `/api/resource/Scheduled Job Type/${JOB_TYPE}`, { json: { stopped: 1 } });
    expect(stop.status, stop.text).toBe(200);
    const before = await runs();
    await makeDue();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await runs()).toEqual(before);

    const start = await t.call('PUT', `/api/resource/Scheduled Job Type/${JOB_TYPE}`, { json: { stopped: 0, create_log: 1 } });
    expect(start.status, start.text).toBe(200);
    await makeDue();
    expect(await settled(before.jobs + 1)).toEqual({ jobs: before.jobs + 1, notes: before.notes + 1 });
    const logs = await until(
      async () => (await t.call('GET', '/api/resource/Scheduled Job Log', { query: { fields: '["scheduled_job_type","status"]' } })).body.data as unknown[],
      (list) => list.length > 0,
    );
    expect(logs).toEqual([{ scheduled_job_type: JOB_TYPE, status: 'Complete' }]);

    const bad = await t.call('PUT', `/api/resource/Scheduled Job Type/${JOB_TYPE}`, { json: { frequency: 'Cron', cron_format: 'every minute' } });
    expect(bad.status).toBe(417);
    await stopWorker(worker);
  }, 90_000);
});
