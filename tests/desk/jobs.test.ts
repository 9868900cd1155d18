import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueue, JOB_LAB, waitForStatus } from '../jobs/support';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { field, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/**
 * RQ Job in the desk: a failed job's form shows its error and a Retry that queues it again (it then
 * runs and finishes); a job in the list. A database of its own: jobs run in this process.
 */

vi.setConfig({ testTimeout: 90_000 });

let database: FreshDatabase;
let f: DeskFixture;
beforeAll(async () => {
  database = await freshDatabase();
  f = await startDesk({ databaseUrl: database.url, apps: [JOB_LAB], worker: { sweepIntervalMs: 100 } });
}, 120_000);
afterAll(async () => {
  await stopDesk(f);
  await database.drop();
});

describe('RQ Job in the desk', () => {
  it('a failed job shows its error; Retry runs it again', async () => {
    const { page, origin, tenant } = await signedIn(f);
    const job = await enqueue(tenant, { method: 'flaky', kwargs: { title: 'desk flaky', succeed_on: 2 } });
    await waitForStatus(f.server.db, job.id, 'failed');

    await page.goto(`${origin}/app/rq-job`);
    await expect.poll(() => page.getByText('job_lab.tasks.flaky').count()).toBeGreaterThan(0);

    await page.goto(`${origin}/app/rq-job/${job.id}`);
    await expect.poll(() => field(page, 'status').inputValue()).toBe('failed');
    expect(await field(page, 'exc_info').textContent()).toContain('flaky failed on try 1');
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Retry' }).click();
    await waitForStatus(f.server.db, job.id, 'finished');
    await page.reload();
    await expect.poll(() => field(page, 'status').inputValue()).toBe('finished');
    expect(await seriousViolations(page)).toEqual([]);
  });
});
