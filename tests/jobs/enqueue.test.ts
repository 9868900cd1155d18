import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';
import { startSmtpSink, type SmtpSink } from '../email/support';
import { call } from '../support/server';
import { enqueue, JOB_LAB, jobRow, noteTitles, waitForNote, waitForStatus } from './support';

/**
 * frappe.enqueue through the HTTP surface, in the `npm start` mode (jobs run in-process, no Redis):
 * what a job does, with whose rights; what never runs (a rolled-back transaction, a method that
 * failed after enqueue_after_commit); deduplication by jobId; retries; enqueue_doc; bad options.
 * A database of its own, so that no other file's worker takes these jobs.
 */

let database: FreshDatabase;
let server: TestServer;
let t: TestTenant;
let sink: SmtpSink;

beforeAll(async () => {
  database = await freshDatabase();
  sink = await startSmtpSink();
  server = await startTestServer({ databaseUrl: database.url, apps: [JOB_LAB], worker: { sweepIntervalMs: 100, smtpUrl: sink.url } });
  t = await server.tenant('jobs');
}, 60_000);

afterAll(async () => {
  await server.close();
  await sink.close();
  await database.drop();
});

describe('background jobs (in-process)', () => {
  it('a method enqueues a job that writes a document as the user who enqueued it', async () => {
    const job = await enqueue(t, { kwargs: { title: 'from a job' } });
    expect(job.created).toBe(true);
    await waitForNote(t, 'from a job');
    const notes = await t.call('GET', '/api/resource/Job Note', { query: { fields: '["title","written_by"]', filters: '[["title","=","from a job"]]' } });
    expect(notes.body.data).toEqual([{ title: 'from a job', written_by: 'Administrator' }]);
    const row = await waitForStatus(server.db, job.id, 'finished');
    expect(row).toMatchObject({ status: 'finished', attempts: 1, error: null, queue: 'default' });
  });

  it('a controller hook enqueues in its transaction: committed it runs, rolled back it never does', async () => {
    const ok = await t.call('POST', '/api/resource/Job Note', { json: { title: 'chain one' } });
    expect(ok.status, ok.text).toBe(200);
    await waitForNote(t, 'chain one (from the hook)');

    const refused = await t.call('POST', '/api/resource/Job Note', { json: { title: 'chain two then refuse' } });
    expect(refused.status).toBe(417);
    const { rows } = await server.db.query(`SELECT 1 FROM quire.jobs WHERE "tenant" = $1 AND "kwargs"->>'title' LIKE 'chain two%'`, [t.name]);
    expect(rows).toEqual([]);
  });

  it('an enqueue_after_commit job of a method that then fails never runs', async () => {
    const res = await t.call('POST', '/api/method/job_lab.api.enqueue_then_fail', { json: { title: 'never written' } });
    expect(res.status).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { rows } = await server.db.query(`SELECT 1 FROM quire.jobs WHERE "tenant" = $1 AND "kwargs"->>'title' = 'never written'`, [t.name]);
    expect(rows).toEqual([]);
    expect(await noteTitles(t)).not.toContain('never written');
  });

  it('an enqueue_after_commit job of a method that returns is written before the answer', async () => {
    const job = await enqueue(t, { kwargs: { title: 'after commit' }, after_commit: 1 });
    expect(job.created).toBe(true);
    expect(await jobRow(server.db, job.id)).toBeDefined(); // already there when the answer came
    await waitForNote(t, 'after commit');
  });

  it('jobId deduplicates while a job with it is queued or running, and runs again once it finished', async () => {
    const first = await enqueue(t, { method: 'slow_note', kwargs: { title: 'dedup 1', ms: 800 }, job_id: 'only-one' });
    const second = await enqueue(t, { method: 'slow_note', kwargs: { title: 'dedup 2', ms: 800 }, job_id: 'only-one' });
    expect(first.created).toBe(true);
    expect(second).toEqual({ id: first.id, created: false });
    await waitForStatus(server.db, first.id, 'finished');
    const third = await enqueue(t, { method: 'slow_note', kwargs: { title: 'dedup 3', ms: 10 }, job_id: 'only-one' });
    expect(third.created).toBe(true);
    expect(third.id).not.toBe(first.id);
    await waitForNote(t, 'dedup 3');
    const titles = await noteTitles(t);
    expect(titles.filter((x) => x.startsWith('dedup'))).toEqual(['dedup 1', 'dedup 3']);
  });

  it('a failing job is retried with backoff where asked, and recorded failed with its error', async () => {
    const retried = await enqueue(t, { method: 'flaky', kwargs: { title: 'flaky a', succeed_on: 3 }, retries: 3, backoff_seconds: 1 });
    const row = await waitForStatus(server.db, retried.id, 'finished', 20_000);
    expect(row).toMatchObject({ status: 'finished', attempts: 3 });

    const failing = await enqueue(t, { method: 'flaky', kwargs: { title: 'flaky b' }, retries: 1, backoff_seconds: 0 });
    const failed = await waitForStatus(server.db, failing.id, 'failed');
    expect(failed).toMatchObject({ status: 'failed', attempts: 2, error: 'Error: flaky failed on try 2' });
  });

  it('a job past its timeout is recorded failed', async () => {
    const job = await enqueue(t, { method: 'slow_note', kwargs: { title: 'too slow', ms: 3000 }, timeout: 1 });
    const row = await waitForStatus(server.db, job.id, 'failed');
    expect(row?.error).toBe('JobTimeoutException: Job exceeded the 1 s timeout');
  });

  it('enqueue_doc runs a document method of the controller', async () => {
    const note = await t.call('POST', '/api/resource/Job Note', { json: { title: 'original' } });
    const res = await t.call('POST', '/api/method/job_lab.api.enqueue_copy', { json: { name: note.body.data.name, suffix: '!' } });
    expect(res.status, res.text).toBe(200);
    await waitForNote(t, 'copy of original!');
  });

  it('refuses bad enqueues with a clear 417: an unknown function, an unknown queue', async () => {
    const unknown = await t.call('POST', '/api/method/job_lab.api.enqueue', { json: { method: 'no_such_task' } });
    expect(unknown.status).toBe(417);
    expect(unknown.body.exception).toContain('No function named job_lab.tasks.no_such_task to enqueue');
    const queue = await t.call('POST', '/api/method/job_lab.api.enqueue', { json: { queue: 'fast' } });
    expect(queue.status).toBe(417);
    expect(queue.body.exception).toContain('Invalid enqueue option queue');
  });

  it("a password reset's email arrives through the worker within seconds, not at the next minute's tick", async () => {
    const made = await t.call('POST', '/api/resource/User', { json: { email: 'reset.me@example.com', first_name: 'Reset' } });
    expect(made.status, made.text).toBe(200);
    const asked = Date.now();
    const reset = await call(server.url, t.name, 'POST', '/api/method/frappe.core.doctype.user.user.reset_password', {
      auth: null,
      json: { user: 'reset.me@example.com' },
    });
    expect(reset.status, reset.text).toBe(200);
    const mail = await until(
      () => Promise.resolve(sink.received.find((m) => m.to.includes('reset.me@example.com'))),
      (m) => m !== undefined,
      15_000,
    );
    expect(mail).toMatchObject({ subject: 'Password Reset' });
    expect(mail?.body).toContain('/update-password?key=');
    expect(Date.now() - asked).toBeLessThan(10_000);
    // The server has the message a moment before the sender hears its answer and marks the row.
    const rows = await until(
      async () =>
        (await t.call('GET', '/api/resource/Email Queue', { query: { fields: '["status"]', filters: '[["recipients","=","reset.me@example.com"]]' } })).body
          .data as unknown[],
      (list) => JSON.stringify(list) === '[{"status":"Sent"}]',
    );
    expect(rows).toEqual([{ status: 'Sent' }]);
  });

  it("RQ Job (virtual) lists, counts, reads, cancels, retries and deletes the tenant's own jobs, and no one else's", async () => {
    const job = await enqueue(t, { method: 'flaky', kwargs: { title: 'flaky c', succeed_on: 2 }, retries: 1, backoff_seconds: 60 });
    await until(
      () => jobRow(server.db, job.id),
      (r) => r?.attempts === 1 && r.status === 'queued', // waiting out its backoff
    );
    const listed = await t.call('GET', '/api/resource/RQ Job', {
      query: {
        fields: '["name","status","job_name","queue","exc_info"]',
        filters: JSON.stringify([
          ['status', '=', 'queued'],
          ['job_name', '=', 'job_lab.tasks.flaky'],
        ]),
      },
    });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toEqual([
      { name: job.id, status: 'queued', job_name: 'job_lab.tasks.flaky', queue: 'default', exc_info: 'Error: flaky failed on try 1' },
    ]);

    const cancel = await t.call('POST', '/api/method/frappe.core.doctype.rq_job.rq_job.cancel_job', { json: { name: job.id } });
    expect(cancel.status, cancel.text).toBe(200);
    const read = await t.call('GET', `/api/resource/RQ Job/${job.id}`);
    expect(read.body.data).toMatchObject({
      name: job.id,
      status: 'canceled',
      job_name: 'job_lab.tasks.flaky',
      arguments: '{"title": "flaky c", "succeed_on": 2}',
    });
    const count = await t.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'RQ Job', filters: '[["status","=","canceled"]]' } });
    expect(count.body.message).toBe(1);

    const other = await server.tenant('jobs2');
    expect((await other.call('GET', `/api/resource/RQ Job/${job.id}`)).status).toBe(404);
    expect((await other.call('GET', '/api/resource/RQ Job')).body.data).toEqual([]);
    expect((await other.call('POST', '/api/method/frappe.core.doctype.rq_job.rq_job.retry_job', { json: { name: job.id } })).status).toBe(404);

    const retry = await t.call('POST', '/api/method/frappe.core.doctype.rq_job.rq_job.retry_job', { json: { name: job.id } });
    expect(retry.status, retry.text).toBe(200);
    expect(await waitForStatus(server.db, job.id, 'finished')).toMatchObject({ status: 'finished', attempts: 1 });

    expect((await t.call('PUT', `/api/resource/RQ Job/${job.id}`, { json: { status: 'queued' } })).status).toBe(417);
    const bad = await t.call('GET', '/api/resource/RQ Job', { query: { filters: '[["arguments","like","%x%"]]' } });
    expect(bad.status).toBe(417);
    expect((await t.call('DELETE', `/api/resource/RQ Job/${job.id}`)).status).toBe(202);
    expect((await t.call('GET', `/api/resource/RQ Job/${job.id}`)).status).toBe(404);
  });

  it('a job function is not callable over HTTP', async () => {
    const res = await t.call('POST', '/api/method/job_lab.tasks.write_note', { json: { title: 'x' } });
    expect(res.status).toBe(403);
  });
});
