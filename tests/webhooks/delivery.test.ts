import { createHmac } from 'node:crypto';
import path from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { parseCidrList, standardWebhookSecret } from '@quire/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';
import { startReceiver, type Receiver } from '../support/receiver';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { freshDatabase } from '../platform/migrate-support';
import { until } from '../support/until';

/**
 * Webhooks end to end in the `npm start` mode (in-process delivery from the outbox): a real local
 * receiver, the Webhook DocType through the record API, Frappe's events and payloads, both
 * signatures, retries on a shortened clock, 410, timeouts, the address guard, replay.
 */

let server: TestServer;
let receiver: Receiver;
let database: Awaited<ReturnType<typeof freshDatabase>>;

beforeAll(async () => {
  receiver = await startReceiver();
  // A database of its own: the retry timings below are this runner's, and another file's runner
  // (with another schedule) sweeping the same outbox could make an attempt first.
  database = await freshDatabase();
  server = await startTestServer({
    databaseUrl: database.url,
    apps: [path.join(ROOT, 'tests/fixtures/apps/lab_app')],
    webhooks: { allowNets: parseCidrList('127.0.0.1/32'), retry: { baseDelayMs: 150, maxDelayMs: 2000, maxAgeMs: 30_000, jitter: 0 } },
  });
}, 60_000);
afterAll(async () => {
  await server.close();
  await receiver.close();
  await database.drop();
});

let counter = 0;
/** A webhook through the record API; its URL carries a unique path so tests never read each other's requests. */
async function webhook(t: TestTenant, fields: Record<string, unknown>): Promise<{ name: string; path: string }> {
  const name = `hook-${++counter}-${t.name}`;
  const path = `/${name}`;
  const res = await t.call('POST', '/api/resource/Webhook', {
    json: { name, request_url: `${receiver.url}${path}`, request_method: 'POST', ...fields },
  });
  expect(res.status, res.text).toBe(200);
  return { name, path };
}

const at = (path: string) => (r: { url: string }) => r.url === path;

async function logs(t: TestTenant, hook: string): Promise<Array<Record<string, unknown>>> {
  const res = await t.call('GET', '/api/resource/Webhook Request Log', {
    query: { fields: '["*"]', filters: JSON.stringify([['webhook', '=', hook]]), order_by: 'creation asc', limit: 0 },
  });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('the Webhook DocType', () => {
  it('is managed through the record API, named by the client, and validated like Frappe', async () => {
    const t = await server.tenant('wh');
    const { name } = await webhook(t, { webhook_doctype: 'ToDo', webhook_docevent: 'after_insert' });
    expect((await t.call('GET', `/api/resource/Webhook/${name}`)).body.data).toMatchObject({ name, webhook_doctype: 'ToDo', enabled: 1, timeout: 5 });
    const refused = [
      { name: 'w1', webhook_doctype: 'ToDo', webhook_docevent: 'on_submit', request_url: receiver.url },
      { name: 'w2', webhook_doctype: 'ToDo', webhook_docevent: 'on_update', request_url: 'httpbin.org?post' },
      { name: 'w3', webhook_doctype: 'ToDo', webhook_docevent: 'on_update', request_url: receiver.url, condition: 'doc.status ==' },
      { name: 'w4', webhook_doctype: 'ToDo', webhook_docevent: 'on_update', request_url: receiver.url, enable_security: 1 },
      { name: 'w5', webhook_doctype: 'ToDo', webhook_docevent: 'on_update', request_url: receiver.url, request_structure: 'JSON', webhook_json: '{{ doc.name' },
      { name: 'w6', webhook_doctype: 'Webhook Request Log', webhook_docevent: 'after_insert', request_url: receiver.url },
    ];
    for (const json of refused) {
      const res = await t.call('POST', '/api/resource/Webhook', { json });
      expect(res.status, JSON.stringify(json)).toBe(417);
    }
  });
});

describe('events, payloads and signatures', () => {
  it('after_insert sends Frappe’s form-structure body (JSON text) with the event id headers', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, {
      webhook_doctype: 'ToDo',
      webhook_docevent: 'after_insert',
      request_structure: 'Form URL-Encoded',
      webhook_data: [
        { fieldname: 'name', key: 'name' },
        { fieldname: 'description', key: 'what' },
      ],
      webhook_headers: [{ key: 'X-Custom', value: 'yes' }],
    });
    const created = await t.call('POST', '/api/resource/ToDo', { json: { description: 'héllo' } });
    const [req] = await receiver.waitFor(1, 10_000, at(hook.path));
    expect(req!.method).toBe('POST');
    expect(req!.body).toBe(`{"name": "${created.body.data.name}", "what": "h\\u00e9llo"}`);
    expect(req!.headers['x-custom']).toBe('yes');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(req!.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
    const [log] = await until(
      () => logs(t, hook.name),
      (l) => l.length === 1,
    );
    expect(log).toMatchObject({
      outcome: 'Delivered',
      status_code: 200,
      attempt: 1,
      reference_doctype: 'ToDo',
      reference_document: created.body.data.name,
      event_id: req!.headers['webhook-id'],
    });
  });

  it('a change to a webhook applies to the very next write (definitions are cached with the metadata)', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, {
      webhook_doctype: 'ToDo',
      webhook_docevent: 'after_insert',
      request_structure: 'Form URL-Encoded',
      webhook_data: [{ fieldname: 'description', key: 'before' }],
    });
    const write = async (description: string) => expect((await t.call('POST', '/api/resource/ToDo', { json: { description } })).status).toBe(200);
    await write('one');
    const change = async (json: Record<string, unknown>) => expect((await t.call('PUT', `/api/resource/Webhook/${hook.name}`, { json })).status).toBe(200);
    await change({ webhook_data: [{ fieldname: 'description', key: 'after' }] });
    await write('two');
    // Disabling cancels what is still pending: 'two' is let through before the webhook is disabled.
    await receiver.waitFor(2, 10_000, at(hook.path));
    await change({ enabled: 0 });
    await write('three');
    await change({ enabled: 1 });
    await write('four');
    const got = await receiver.waitFor(3, 10_000, at(hook.path));
    expect(got.map((r) => r.body).sort()).toEqual(['{"after": "four"}', '{"after": "two"}', '{"before": "one"}']);
  });

  it('a JSON template renders the document; both signatures verify', async () => {
    const t = await server.tenant('wh');
    const secret = 'shh, a webhook secret';
    const hook = await webhook(t, {
      webhook_doctype: 'ToDo',
      webhook_docevent: 'on_update',
      request_structure: 'JSON',
      webhook_json: '{"todo": {{ doc.name | tojson }}, "status": "{{ doc.status }}", "items": [1, 2]}',
      enable_security: 1,
      webhook_secret: secret,
    });
    expect((await t.call('GET', `/api/resource/Webhook/${hook.name}`)).body.data.webhook_secret).toMatch(/^\*+$/);
    const created = await t.call('POST', '/api/resource/ToDo', { json: { description: 'signed' } });
    const [req] = await receiver.waitFor(1, 10_000, at(hook.path));
    expect(JSON.parse(req!.body)).toEqual({ todo: created.body.data.name, status: 'Open', items: [1, 2] });
    expect(req!.headers['x-frappe-webhook-signature']).toBe(createHmac('sha256', secret).update(req!.body).digest('base64'));
    const verified = new StandardWebhook(standardWebhookSecret(secret)).verify(req!.body, {
      'webhook-id': String(req!.headers['webhook-id']),
      'webhook-timestamp': String(req!.headers['webhook-timestamp']),
      'webhook-signature': String(req!.headers['webhook-signature']),
    });
    expect(verified).toEqual(JSON.parse(req!.body));
  });

  it('"a status changes": on_change with a condition fires only when it holds, never on insert', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, {
      webhook_doctype: 'ToDo',
      webhook_docevent: 'on_change',
      condition: 'doc.status == "Closed" and doc.priority in ["High", "Medium"]',
      request_structure: 'Form URL-Encoded',
      webhook_data: [{ fieldname: 'status', key: 'status' }],
    });
    const created = await t.call('POST', '/api/resource/ToDo', { json: { description: 'watch me', status: 'Closed' } });
    const name = created.body.data.name as string;
    await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { status: 'Open' } });
    await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { status: 'Closed' } });
    const hits = await receiver.waitFor(1, 10_000, at(hook.path));
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.filter(at(hook.path))).toHaveLength(1);
    expect(hits[0]!.body).toBe('{"status": "Closed"}');
  });

  it('"a document is submitted": on_submit, on_update_after_submit and on_cancel fire', async () => {
    const t = await server.tenant('wh');
    const hooks = await Promise.all(
      ['on_submit', 'on_update_after_submit', 'on_cancel'].map((event) =>
        webhook(t, {
          webhook_doctype: 'Lab Sample',
          webhook_docevent: event,
          request_structure: 'Form URL-Encoded',
          webhook_data: [{ fieldname: 'docstatus', key: 'docstatus' }],
        }),
      ),
    );
    const created = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 's1' } });
    const path = `/api/resource/Lab Sample/${created.body.data.name}`;
    await t.call('PUT', path, { json: { docstatus: 1 } });
    await t.call('PUT', path, { json: { docstatus: 1 } });
    await t.call('PUT', path, { json: { docstatus: 2 } });
    const bodies = await Promise.all(hooks.map(async (h) => (await receiver.waitFor(1, 10_000, at(h.path)))[0]!.body));
    expect(bodies).toEqual(['{"docstatus": 1}', '{"docstatus": 1}', '{"docstatus": 2}']);
  });

  it('on_trash fires with the deleted document', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, {
      webhook_doctype: 'ToDo',
      webhook_docevent: 'on_trash',
      request_structure: 'Form URL-Encoded',
      webhook_data: [{ fieldname: 'description', key: 'd' }],
    });
    const created = await t.call('POST', '/api/resource/ToDo', { json: { description: 'doomed' } });
    await t.call('DELETE', `/api/resource/ToDo/${created.body.data.name}`);
    expect((await receiver.waitFor(1, 10_000, at(hook.path)))[0]!.body).toBe('{"d": "doomed"}');
  });

  it('a rolled-back change sends nothing and leaves no event behind', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, { webhook_doctype: 'Lab Sample', webhook_docevent: 'after_insert' });
    const refused = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'r1', title: 'refuse after write' } });
    expect(refused.status).toBe(417);
    const fine = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'r2' } });
    expect(fine.status).toBe(200);
    await receiver.waitFor(1, 10_000, at(hook.path));
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.filter(at(hook.path))).toHaveLength(1);
    const { rows } = await server.db.query(`SELECT count(*)::int AS n FROM quire.webhook_events WHERE "tenant" = $1 AND "webhook" = $2`, [t.name, hook.name]);
    expect(rows[0]).toEqual({ n: 1 });
  });

  it('sends once per document and transaction, with the last state', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, {
      webhook_doctype: 'ToDo',
      webhook_docevent: 'on_update',
      request_structure: 'Form URL-Encoded',
      webhook_data: [{ fieldname: 'description', key: 'd' }],
    });
    const created = await t.call('POST', '/api/resource/ToDo', { json: { description: 'v1' } });
    await receiver.waitFor(1, 10_000, at(hook.path));
    const name = created.body.data.name as string;
    // bulk_update saves the same document twice in one transaction
    const res = await t.call('POST', '/api/method/frappe.client.bulk_update', {
      json: {
        docs: [
          { doctype: 'ToDo', docname: name, description: 'v2' },
          { doctype: 'ToDo', docname: name, description: 'v3' },
        ],
      },
    });
    expect(res.body.message).toEqual({ failed_docs: [] });
    const hits = await receiver.waitFor(2, 10_000, at(hook.path));
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.filter(at(hook.path)).map((r) => r.body)).toEqual(['{"d": "v1"}', '{"d": "v3"}']);
    expect(hits).toHaveLength(2);
  });
});

describe('delivery done well', () => {
  it('retries failures with exponential backoff, honouring Retry-After, then succeeds', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, { webhook_doctype: 'ToDo', webhook_docevent: 'after_insert' });
    let calls = 0;
    receiver.respond((r) => {
      if (r.url !== hook.path) return { status: 200 };
      calls++;
      if (calls === 1) return { status: 500 };
      if (calls === 2) return { status: 503, headers: { 'Retry-After': '1' } };
      if (calls === 3) return { status: 502 };
      return { status: 204 };
    });
    try {
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'flaky receiver' } });
      const hits = await receiver.waitFor(4, 15_000, at(hook.path));
      const gaps = hits.slice(1).map((h, i) => h.at - hits[i]!.at);
      expect(gaps[0]).toBeGreaterThanOrEqual(140); // base 150 ms
      expect(gaps[1]).toBeGreaterThanOrEqual(950); // Retry-After: 1 s beats the 300 ms backoff
      expect(gaps[2]).toBeGreaterThanOrEqual(580); // 4 × base
      const entries = await until(
        () => logs(t, hook.name),
        (l) => l.length === 4,
      );
      expect(entries.map((l) => [l.attempt, l.outcome, l.status_code])).toEqual([
        [1, 'Failed', 500],
        [2, 'Failed', 503],
        [3, 'Failed', 502],
        [4, 'Delivered', 204],
      ]);
      expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
    } finally {
      receiver.respond(() => ({ status: 200 }));
    }
  });

  it('gives up after the maximum age and records the event as failed', async () => {
    // A database of its own: every runner on a database sweeps its whole outbox, and the other
    // servers' runners (other policies, other test files) would otherwise take this event's attempts.
    const own = await freshDatabase();
    const quick = await startTestServer({
      databaseUrl: own.url,
      webhooks: { allowNets: parseCidrList('127.0.0.1/32'), retry: { baseDelayMs: 100, maxDelayMs: 200, maxAgeMs: 700, jitter: 0 } },
    });
    try {
      const t = await quick.tenant('wh');
      await webhook(t, { webhook_doctype: 'ToDo', webhook_docevent: 'after_insert', request_url: `${receiver.url}/always-500-${t.name}` });
      receiver.respond((r) => (r.url.startsWith('/always-500') ? { status: 500 } : { status: 200 }));
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'never accepted' } });
      const { rows } = await until(
        () => quick.db.query<{ status: string; attempts: number }>(`SELECT "status", "attempts" FROM quire.webhook_events WHERE "tenant" = $1`, [t.name]),
        (r) => r.rows[0]?.status === 'failed',
      );
      expect(rows[0]!.status).toBe('failed');
      expect(rows[0]!.attempts).toBeGreaterThanOrEqual(3);
    } finally {
      receiver.respond(() => ({ status: 200 }));
      await quick.close();
      await own.drop();
    }
  });

  it('a 410 disables the webhook', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, { webhook_doctype: 'ToDo', webhook_docevent: 'after_insert' });
    receiver.respond((r) => (r.url === hook.path ? { status: 410 } : { status: 200 }));
    try {
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'gone' } });
      await receiver.waitFor(1, 10_000, at(hook.path));
      const enabled = await until(
        async () => (await t.call('GET', `/api/resource/Webhook/${hook.name}`)).body.data.enabled,
        (v) => v === 0,
      );
      expect(enabled).toBe(0);
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'not sent' } });
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received.filter(at(hook.path))).toHaveLength(1);
    } finally {
      receiver.respond(() => ({ status: 200 }));
    }
  });

  it('enforces the timeout and logs it', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, { webhook_doctype: 'ToDo', webhook_docevent: 'after_insert', timeout: 1 });
    receiver.respond((r) => (r.url === hook.path ? { status: 200, delayMs: 3000 } : { status: 200 }));
    try {
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'slow receiver' } });
      const [first] = await until(
        () => logs(t, hook.name),
        (l) => l.length >= 1,
        8000,
      );
      expect(first).toMatchObject({ outcome: 'Timeout', attempt: 1 });
      expect(Number(first!.duration)).toBeGreaterThanOrEqual(900);
      expect(Number(first!.duration)).toBeLessThan(2500);
    } finally {
      receiver.respond(() => ({ status: 200 }));
    }
  });

  it('refuses private targets by default: a log row with the reason, nothing sent', async () => {
    // Its own database, so that no runner allowed to reach 127.0.0.1 (another server's) takes the event.
    const own = await freshDatabase();
    const strict = await startTestServer({ databaseUrl: own.url, webhooks: {} });
    try {
      const t = await strict.tenant('wh');
      const hook = await webhook(t, { webhook_doctype: 'ToDo', webhook_docevent: 'after_insert' });
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'to localhost' } });
      const [log] = await until(
        () => logs(t, hook.name),
        (l) => l.length === 1,
      );
      expect(log).toMatchObject({ outcome: 'Refused', attempt: 1 });
      expect(String(log!.error)).toMatch(/loopback/);
      expect(receiver.received.filter(at(hook.path))).toHaveLength(0);
      for (const url of ['http://169.254.169.254/latest/meta-data', 'http://10.0.0.1/', 'http://[::1]/x']) {
        await webhook(t, { webhook_doctype: 'ToDo', webhook_docevent: 'on_update', request_url: url });
      }
      await t.call('POST', '/api/resource/ToDo', { json: { description: 'to private networks' } });
      const refused = await until(
        () =>
          strict.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM quire.webhook_events WHERE "tenant" = $1 AND "status" = 'failed' AND "last_error" IS NOT NULL`,
            [t.name],
          ),
        (r) => r.rows[0]!.n === 5,
      );
      // the after_insert hook twice, and each of the three on_update hooks once
      expect(refused.rows[0]!.n).toBe(5);
    } finally {
      await strict.close();
      await own.drop();
    }
  });

  it('replay_event sends an event again with the same id', async () => {
    const t = await server.tenant('wh');
    const hook = await webhook(t, { webhook_doctype: 'ToDo', webhook_docevent: 'after_insert' });
    await t.call('POST', '/api/resource/ToDo', { json: { description: 'replay me' } });
    const [first] = await receiver.waitFor(1, 10_000, at(hook.path));
    await until(
      () => logs(t, hook.name),
      (l) => l.length === 1,
    );
    const replay = await t.call('POST', '/api/method/frappe.integrations.doctype.webhook.webhook.replay_event', {
      json: { event: first!.headers['webhook-id'] },
    });
    expect(replay.body).toEqual({ message: true });
    const hits = await receiver.waitFor(2, 10_000, at(hook.path));
    expect(hits[1]!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(hits[1]!.body).toBe(first!.body);
  });
});
