import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { quireJson } from '../support/process';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';
import { enqueue, JOB_LAB, jobRow, waitForNote, waitForStatus } from './support';

/**
 * A suspended or read-only tenant's background jobs and scheduled events wait (`quire tenant
 * suspend [--read-only]`): a job writes, which neither may, and a suspended tenant should cost the
 * platform nothing. A job already running finishes; what waits is picked once the tenant is
 * resumed, and a scheduled run that fell due meanwhile happens once. Other tenants' jobs run
 * throughout. In-process runner, one job at a time, on a database of its own.
 */

const JOB_TYPE = 'tasks.tick_note';
let database: FreshDatabase;
let server: TestServer;

beforeAll(async () => {
  database = await freshDatabase();
  server = await startTestServer({ databaseUrl: database.url, apps: [JOB_LAB], worker: { sweepIntervalMs: 100, concurrency: 1 } });
}, 60_000);

afterAll(async () => {
  await server.close();
  await database.drop();
});

const tenantCommand = (args: string[]) => quireJson(['tenant', ...args], { DATABASE_URL: database.url });

/** Sets the tenant's status with the CLI and waits until this process's directory has it. */
async function setStatus(t: TestTenant, args: string[], status: string): Promise<void> {
  const { json } = await tenantCommand(args);
  expect(json).toEqual({ name: t.name, status });
  await until(
    () => Promise.resolve(server.platform.tenants.get(t.name)?.status),
    (s) => s === status,
    3000,
  );
}

/** The tenant's scheduled runs of the tick (job rows). */
async function tickRuns(t: TestTenant): Promise<number> {
  const { rows } = await server.db.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM quire.jobs WHERE "tenant" = $1 AND "scheduled_job_type" = $2`, [
    t.name,
    JOB_TYPE,
  ]);
  return rows[0]!.n;
}

const sweeps = () => new Promise((resolve) => setTimeout(resolve, 1000)); // ten sweeps of the runner

describe('background jobs of a suspended or read-only tenant', () => {
  it('a suspended tenant’s waiting job waits while another tenant’s runs; the one already running finishes; resumed, it runs', async () => {
    const t = await server.tenant('jsus');
    const other = await server.tenant('jsus');
    const running = await enqueue(t, { method: 'slow_note', kwargs: { title: 'running', ms: 4000 } });
    const waiting = await enqueue(t, { kwargs: { title: 'waiting' } });
    await waitForStatus(server.db, running.id, 'started');
    await setStatus(t, ['suspend', t.name], 'suspended');

    expect(await waitForStatus(server.db, running.id, 'finished')).toMatchObject({ status: 'finished', attempts: 1 });
    const others = await enqueue(other, { kwargs: { title: 'another tenant' } });
    await waitForNote(other, 'another tenant');
    await sweeps();
    expect(await jobRow(server.db, waiting.id)).toMatchObject({ status: 'queued', attempts: 0, started_at: null });
    expect((await jobRow(server.db, others.id))?.status).toBe('finished');

    await setStatus(t, ['resume', t.name], 'active');
    expect(await waitForStatus(server.db, waiting.id, 'finished')).toMatchObject({ status: 'finished', attempts: 1 });
    await waitForNote(t, 'waiting');
  }, 60_000);

  it('a read-only tenant’s scheduled run that falls due waits and happens once when it is active again; another tenant’s runs meanwhile', async () => {
    const t = await server.tenant('jsro');
    const other = await server.tenant('jsro');
    // Once a year: only the test makes a run due (no real minute falls due meanwhile).
    for (const tenant of [t, other]) {
      const yearly = await tenant.call('PUT', `/api/resource/Scheduled Job Type/${JOB_TYPE}`, { json: { cron_format: '0 0 1 1 *' } });
      expect(yearly.status, yearly.text).toBe(200);
    }
    const before = { t: await tickRuns(t), other: await tickRuns(other) };
    await setStatus(t, ['suspend', t.name, '--read-only'], 'read_only');
    await server.db.query(
      `UPDATE quire.job_schedules SET "next_run_at" = (now() at time zone 'utc') - interval '1 second' WHERE "tenant" = ANY($1::text[]) AND "job_type" = $2`,
      [[t.name, other.name], JOB_TYPE],
    );
    await until(
      () => tickRuns(other),
      (n) => n === before.other + 1,
      10_000,
    );
    await sweeps();
    expect(await tickRuns(t)).toBe(before.t);

    await setStatus(t, ['resume', t.name], 'active');
    await until(
      () => tickRuns(t),
      (n) => n > before.t,
      10_000,
    );
    await waitForNote(t, 'tick');
    await sweeps();
    expect({ t: await tickRuns(t), other: await tickRuns(other) }).toEqual({ t: before.t + 1, other: before.other + 1 });
  }, 60_000);
});
