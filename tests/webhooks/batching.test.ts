import { qualified } from '@quire/db';
import { parseCidrList } from '@quire/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { startReceiver, type Receiver } from '../support/receiver';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';

/**
 * Batched delivery in the `npm start` mode (in-process runner): many events claimed per statement,
 * their log rows and states written per batch, the webhook state cache and its invalidation.
 * A database of its own, so that no other test file's runner takes these events.
 */

let database: FreshDatabase;
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startReceiver();
  server = await startTestServer({
    databaseUrl: database.url,
    webhooks: { allowNets: parseCidrList('127.0.0.1/32'), concurrency: 16, retry: { baseDelayMs: 1500, maxDelayMs: 5000, maxAgeMs: 60_000, jitter: 0 } },
  });
}, 60_000);

afterAll(async () => {
  await server.close();
  await receiver.close();
  await database.drop();
});

let counter = 0;
async function webhook(t: TestTenant, fields: Record<string, unknown> = {}): Promise<{ name: string; path: string }> {
  const name = `batch-${++counter}-${t.name}`;
  const res = await t.call('POST', '/api/resource/Webhook', {
    json: { name, webhook_doctype: 'ToDo', webhook_docevent: 'after_insert', request_url: `${receiver.url}/${name}`, ...fields },
  });
  expect(res.status, res.text).toBe(200);
  return { name, path: `/${name}` };
}

async function insertTodos(t: TestTenant, n: number, label: string): Promise<void> {
  for (let i = 0; i < n; i += 200) {
    const docs = Array.from({ length: Math.min(200, n - i) }, (_, j) => ({ doctype: 'ToDo', description: `${label} ${i + j}` }));
    const res = await t.call('POST', '/api/method/frappe.client.insert_many', { json: { docs } });
    expect(res.status, res.text).toBe(200);
  }
}

function logTable(t: TestTenant): string {
  return qualified(t.schema, 'tabWebhook Request Log');
}

describe('batched delivery', () => {
  it('delivers a burst of 600 events once each, with one log row per attempt and every event recorded', async () => {
    const t = await server.tenant('batch');
    const hook = await webhook(t);
    await insertTodos(t, 600, 'burst');
    await receiver.waitFor(600, 30_000, (r) => r.url === hook.path);
    const events = await until(
      () =>
        server.db.query<{ status: string; attempts: number; n: number }>(
          `SELECT "status", "attempts", count(*)::int AS n FROM quire.webhook_events WHERE "tenant" = $1 GROUP BY 1, 2`,
          [t.name],
        ),
      (r) => r.rows.length === 1 && r.rows[0]!.status === 'delivered',
    );
    expect(events.rows).toEqual([{ status: 'delivered', attempts: 1, n: 600 }]);
    const ids = receiver.received.filter((r) => r.url === hook.path).map((r) => String(r.headers['webhook-id']));
    expect(ids).toHaveLength(600);
    expect(new Set(ids).size).toBe(600);
    const logs = await server.db.query<{ n: number; events: number; attempts: number[] }>(
      `SELECT count(*)::int AS n, count(DISTINCT "event_id")::int AS events, array_agg(DISTINCT "attempt")::int[] AS attempts FROM ${logTable(t)} WHERE "webhook" = $1`,
      [hook.name],
    );
    expect(logs.rows[0]).toEqual({ n: 600, events: 600, attempts: [1] });
  });

  it('writes each log row with the columns an insert of the document fills', async () => {
    const t = await server.tenant('batch');
    const hook = await webhook(t, { request_structure: 'Form URL-Encoded', webhook_data: [{ fieldname: 'description', key: 'd' }] });
    const created = await t.call('POST', '/api/resource/ToDo', { json: { description: 'columns' } });
    const [req] = await receiver.waitFor(1, 10_000, (r) => r.url === hook.path);
    const rows = await until(
      () => server.db.query<Record<string, unknown>>(`SELECT * FROM ${logTable(t)} WHERE "webhook" = $1`, [hook.name]),
      (r) => r.rows.length === 1,
    );
    const row = rows.rows[0]!;
    expect(row).toMatchObject({
      owner: 'Administrator',
      modified_by: 'Administrator',
      docstatus: 0,
      idx: 0,
      webhook: hook.name,
      event_id: req!.headers['webhook-id'],
      reference_doctype: 'ToDo',
      reference_document: created.body.data.name,
      user: 'Administrator',
      url: `${receiver.url}${hook.path}`,
      data: '{"d": "columns"}',
      outcome: 'Delivered',
      status_code: 200,
      attempt: 1,
      response: 'ok',
      error: null,
    });
    // The DocType's autoname is `hash`: ten base32hex characters, as insertDoc names it.
    expect(row.name).toMatch(/^[0-9a-v]{10}$/);
    expect(row.creation).toBe(row.modified);
    expect(JSON.parse(String(row.headers))).toMatchObject({ 'webhook-id': req!.headers['webhook-id'], 'Content-Type': 'application/json' });
    // Readable through the record API like any document of the DocType.
    const read = await t.call('GET', `/api/resource/Webhook Request Log/${String(row.name)}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ name: row.name, outcome: 'Delivered', attempt: 1 });
  });

  it('a 410 disables the webhook everywhere at once: later writes make no events', async () => {
    const t = await server.tenant('batch');
    const hook = await webhook(t);
    receiver.respond((r) => (r.url === hook.path ? { status: 410 } : { status: 200, body: 'ok' }));
    try {
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'gone' } });
      await receiver.waitFor(1, 10_000, (r) => r.url === hook.path);
      await until(
        async () => (await t.call('GET', `/api/resource/Webhook/${hook.name}`)).body.data.enabled,
        (v) => v === 0,
      );
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'after the 410' } });
      const { rows } = await server.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM quire.webhook_events WHERE "tenant" = $1 AND "webhook" = $2`, [
        t.name,
        hook.name,
      ]);
      // The write after the 410 saw the webhook disabled (its definitions are cached with the metadata).
      expect(rows[0]!.n).toBe(1);
    } finally {
      receiver.respond(() => ({ status: 200, body: 'ok' }));
    }
  });

  it('a webhook disabled while an event waits for its retry: the retry is cancelled, nothing more is sent', async () => {
    const t = await server.tenant('batch');
    const hook = await webhook(t);
    receiver.respond((r) => (r.url === hook.path ? { status: 500 } : { status: 200, body: 'ok' }));
    try {
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'flaky, then disabled' } });
      await receiver.waitFor(1, 10_000, (r) => r.url === hook.path);
      // The retry is due 1.5 s after the first attempt; the webhook is disabled before that.
      expect((await t.call('PUT', `/api/resource/Webhook/${hook.name}`, { json: { enabled: 0 } })).status).toBe(200);
      const { rows } = await until(
        () => server.db.query<{ status: string; attempts: number }>(`SELECT "status", "attempts" FROM quire.webhook_events WHERE "tenant" = $1`, [t.name]),
        (r) => r.rows[0]?.status === 'cancelled',
      );
      expect(rows[0]).toEqual({ status: 'cancelled', attempts: 2 });
      expect(receiver.received.filter((r) => r.url === hook.path)).toHaveLength(1);
      const logs = await server.db.query<{ attempt: number; outcome: string; error: string | null }>(
        `SELECT "attempt", "outcome", "error" FROM ${logTable(t)} WHERE "webhook" = $1 ORDER BY "attempt"`,
        [hook.name],
      );
      expect(logs.rows).toEqual([
        { attempt: 1, outcome: 'Failed', error: 'HTTP 500' },
        { attempt: 2, outcome: 'Failed', error: 'The webhook is disabled' },
      ]);
    } finally {
      receiver.respond(() => ({ status: 200, body: 'ok' }));
    }
  });

  it('a new secret signs the next attempt', async () => {
    const t = await server.tenant('batch');
    const hook = await webhook(t, { enable_security: 1, webhook_secret: 'first secret' });
    await t.call('POST', '/api/resource/ToDo', { json: { description: 'one' } });
    const [first] = await receiver.waitFor(1, 10_000, (r) => r.url === hook.path);
    expect((await t.call('PUT', `/api/resource/Webhook/${hook.name}`, { json: { webhook_secret: 'second secret' } })).status).toBe(200);
    await t.call('POST', '/api/resource/ToDo', { json: { description: 'two' } });
    const hits = await receiver.waitFor(2, 10_000, (r) => r.url === hook.path);
    const { createHmac } = await import('node:crypto');
    const signed = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('base64');
    expect(first!.headers['x-frappe-webhook-signature']).toBe(signed('first secret', first!.body));
    expect(hits[1]!.headers['x-frappe-webhook-signature']).toBe(signed('second secret', hits[1]!.body));
  });
});
