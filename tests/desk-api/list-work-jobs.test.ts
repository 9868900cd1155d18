import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverMessages } from '../record-api/helpers';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { connectTenantSocket } from '../support/sockets';
import { until } from '../support/until';
import { callMethod, listWorkTenant, make, names, type ListWorkTenant } from './list-work-support';

/**
 * The bulk actions' background halves, in the `npm start` mode (no Redis: the job runs in-process):
 * delete_items with more than 10 names and submit_cancel_or_update_docs with 20 or more are
 * enqueued, answer at once, and the job finishes the work as the user who asked, telling their
 * sockets `progress` and `msgprint`. A database of its own, so that no other file's worker takes
 * these jobs.
 */

let database: FreshDatabase;
let server: TestServer;
let w: ListWorkTenant;
const sockets: Socket[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  server = await startTestServer({ databaseUrl: database.url, worker: { sweepIntervalMs: 100 } });
  w = await listWorkTenant(server, 'lwj');
}, 120_000);

afterAll(async () => {
  for (const s of sockets) s.disconnect();
  await server.close();
  await database.drop();
});

/** A socket of the tenant's Administrator, recording what it hears of `events`. */
async function listen(t: TestTenant, events: string[]): Promise<Record<string, unknown[]>> {
  const socket = await connectTenantSocket(server.url, t.name, t.auth);
  sockets.push(socket);
  const heard: Record<string, unknown[]> = {};
  for (const event of events) {
    const list: unknown[] = (heard[event] = []);
    socket.on(event, (payload: unknown) => list.push(payload));
  }
  return heard;
}

async function jobsOf(method: string): Promise<Array<{ status: string; error: string | null; queue: string }>> {
  const { rows } = await server.db.query<{ status: string; error: string | null; queue: string }>(
    `SELECT "status", "error", "queue" FROM quire.jobs WHERE "tenant" = $1 AND "method" = $2`,
    [w.t.name, method],
  );
  return rows;
}

describe('bulk actions as background jobs', () => {
  it('delete_items with more than 10 names enqueues delete_bulk, which deletes all it may and tells the user', async () => {
    const { t } = w;
    const heard = await listen(t, ['progress', 'msgprint']);
    const projects: string[] = [];
    for (let i = 0; i < 12; i++) projects.push(await make(t, 'Project', { title: `p${i}` }));
    const linked = projects[5] as string;
    await make(t, 'Project Task', { subject: 'holds one', project: linked });

    const res = await callMethod(t, 'POST', 'frappe.desk.reportview.delete_items', { doctype: 'Project', items: projects });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({}); // Frappe answers nothing when it enqueues

    const left = await until(
      () => names(t, 'Project'),
      (l) => l.length === 1,
      60_000,
    );
    expect(left).toEqual([linked]);
    const jobs = await until(
      () => jobsOf('frappe.desk.reportview.delete_bulk'),
      (j) => j.every((r) => r.status === 'finished'),
      30_000,
    );
    expect(jobs).toEqual([{ status: 'finished', error: null, queue: 'default' }]);
    const messages = await until(
      () => Promise.resolve(heard.msgprint ?? []),
      (m) => m.length >= 2,
      10_000,
    );
    expect(messages).toContainEqual({ message: `Failed to delete 1 documents: ${linked}`, title: 'Bulk Operation Failed' });
    expect(heard.progress).toContainEqual({ progress: [11, 12], title: 'Deleting Project', description: expect.any(String) });
  });

  it('submit_cancel_or_update_docs with 20 names runs as a job on the short queue and updates every one', async () => {
    const { t } = w;
    const projects: string[] = [];
    for (let i = 0; i < 20; i++) projects.push(await make(t, 'Project', { title: `bulk ${i}` }));
    const res = await callMethod(t, 'POST', 'frappe.desk.doctype.bulk_update.bulk_update.submit_cancel_or_update_docs', {
      doctype: 'Project',
      docnames: projects,
      action: 'update',
      data: { status: 'Done' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toBeUndefined();
    expect(serverMessages(res.body)).toEqual(['Bulk operation is enqueued in background.']);
    const done = await until(
      async () => {
        const list = await t.call('GET', '/api/resource/Project', { query: { filters: JSON.stringify([['status', '=', 'Done']]), limit_page_length: 0 } });
        return (list.body.data as Array<{ name: string }>).map((r) => r.name).sort();
      },
      (l) => l.length === projects.length,
      60_000,
    );
    expect(done).toEqual([...projects].sort());
    const jobs = await until(
      () => jobsOf('frappe.desk.doctype.bulk_update.bulk_update.bulk_action'),
      (j) => j.every((r) => r.status === 'finished'),
      30_000,
    );
    expect(jobs).toEqual([{ status: 'finished', error: null, queue: 'short' }]);
  });

  it('more than 500 names are refused', async () => {
    const many = Array.from({ length: 501 }, (_, i) => `n${i}`);
    const res = await callMethod(w.t, 'POST', 'frappe.desk.doctype.bulk_update.bulk_update.submit_cancel_or_update_docs', {
      doctype: 'Project',
      docnames: many,
      action: 'update',
      data: { status: 'Done' },
    });
    expect(res.status).toBe(417);
    expect(serverMessages(res.body)).toEqual(['Bulk operations only support up to 500 documents.']);
  });
});
