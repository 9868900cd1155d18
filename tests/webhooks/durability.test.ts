import { randomBytes } from 'node:crypto';
import { qualified } from '@quire/db';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quireJson, spawnQuire, type Spawned } from '../support/process';
import { startReceiver, type Receiver } from '../support/receiver';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { call } from '../support/server';
import { until } from '../support/until';

/**
 * Nothing lost, with real processes: `quire serve api` commits events to the outbox and wakes the
 * webhooks processes through Redis; `quire serve webhooks` claims them from Postgres in batches
 * and delivers. Every event arrives after kill -9 of the webhooks process mid-delivery and
 * mid-batch, after the API process dies right after commit, and after Redis is flushed — because
 * Postgres (the outbox) is the source of truth and the webhooks processes sweep it — and processes
 * claiming at the same time never take the same event.
 */

const redisDb = 1 + Math.floor(Math.random() * 14);
const redisUrl = `redis://127.0.0.1:6379/${redisDb}`;
const tenant = `dur${randomBytes(3).toString('hex')}`;
const running = new Set<Spawned>();
let receiver: Receiver;
let auth = '';

// A database of its own: every webhooks runner sweeps its database's whole outbox, so another test
// file's runner on the suite database would take these events (and these processes theirs).
let database: FreshDatabase;

const baseEnv = () => ({
  DATABASE_URL: database.url,
  REDIS_URL: redisUrl,
  WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
  WEBHOOK_SWEEP_INTERVAL_MS: '500',
  WEBHOOK_LEASE_MARGIN_MS: '2000',
  WEBHOOK_RETRY_BASE_MS: '200',
  WEBHOOK_RETRY_JITTER: '0',
  WEBHOOKS_PORT: '0',
  PORT: '0',
});

async function start(service: 'api' | 'webhooks', env: Record<string, string> = {}): Promise<{ p: Spawned; port: number }> {
  const p = spawnQuire(['serve', service], { ...baseEnv(), ...env });
  running.add(p);
  const m = await p.waitFor(service === 'api' ? /listening on port (\d+)/ : /health on port (\d+)/, 60_000);
  return { p, port: Number(m[1]) };
}

async function stop(p: Spawned, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  await p.stop(signal);
  running.delete(p);
}

async function webhook(apiPort: number, path: string): Promise<void> {
  const res = await call(`http://127.0.0.1:${apiPort}`, tenant, 'POST', '/api/resource/Webhook', {
    auth,
    json: {
      name: `hook${path.replace(/\W/g, '-')}`,
      webhook_doctype: 'ToDo',
      webhook_docevent: 'after_insert',
      request_url: `${receiver.url}${path}`,
      timeout: 2,
    },
  });
  expect(res.status, res.text).toBe(200);
}

async function createTodos(apiPort: number, n: number, label: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await call(`http://127.0.0.1:${apiPort}`, tenant, 'POST', '/api/resource/ToDo', { auth, json: { description: `${label} ${i}` } });
    expect(res.status).toBe(200);
  }
}

/** Disables every webhook of the tenant (earlier tests' hooks also watch ToDo after_insert). */
async function disableWebhooks(apiPort: number): Promise<void> {
  const base = `http://127.0.0.1:${apiPort}`;
  const list = await call(base, tenant, 'GET', '/api/resource/Webhook', { auth, query: { fields: '["name"]', limit: 0 } });
  for (const w of list.body.data as Array<{ name: string }>) {
    const res = await call(base, tenant, 'PUT', `/api/resource/Webhook/${w.name}`, { auth, json: { enabled: 0 } });
    expect(res.status, res.text).toBe(200);
  }
}

/** Many ToDos in few transactions (insert_many, 200 per request): a backlog made quickly. */
async function insertTodos(apiPort: number, n: number, label: string): Promise<void> {
  for (let i = 0; i < n; i += 200) {
    const docs = Array.from({ length: Math.min(200, n - i) }, (_, j) => ({ doctype: 'ToDo', description: `${label} ${i + j}` }));
    const res = await call(`http://127.0.0.1:${apiPort}`, tenant, 'POST', '/api/method/frappe.client.insert_many', { auth, json: { docs } });
    expect(res.status, res.text).toBe(200);
  }
}

/** The outbox's events of a webhook by status and attempts made. */
async function outbox(path: string): Promise<Array<{ status: string; attempts: number; n: number }>> {
  const { rows } = await database.db.query<{ status: string; attempts: number; n: number }>(
    `SELECT "status", "attempts", count(*)::int AS n FROM quire.webhook_events WHERE "webhook" = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
    [`hook${path.replace(/\W/g, '-')}`],
  );
  return rows;
}

/** The Webhook Request Log rows of a webhook: event id, attempt number, outcome. */
async function logRows(path: string): Promise<Array<{ event_id: string; attempt: number; outcome: string }>> {
  const { rows: tenants } = await database.db.query<{ schema: string }>(`SELECT "schema" FROM quire.tenants WHERE "name" = $1`, [tenant]);
  const { rows } = await database.db.query<{ event_id: string; attempt: number; outcome: string }>(
    `SELECT "event_id", "attempt", "outcome" FROM ${qualified(tenants[0]!.schema, 'tabWebhook Request Log')} WHERE "webhook" = $1 ORDER BY "creation"`,
    [`hook${path.replace(/\W/g, '-')}`],
  );
  return rows;
}

/** A counter of a webhooks process's /metrics (0 when absent). */
async function metric(opsPort: number, series: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

function distinctIds(path: string): Set<string> {
  return new Set(receiver.received.filter((r) => r.url === path).map((r) => String(r.headers['webhook-id'])));
}

async function untilDelivered(path: string, n: number, ms: number): Promise<number> {
  const started = Date.now();
  while (distinctIds(path).size < n) {
    if (Date.now() - started > ms) throw new Error(`${distinctIds(path).size} of ${n} events reached ${path} in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

beforeAll(async () => {
  database = await freshDatabase();
  const redis = new Redis(redisUrl);
  await redis.flushdb();
  redis.disconnect();
  receiver = await startReceiver();
  const created = await quireJson(['tenant', 'create', tenant], { DATABASE_URL: database.url });
  expect(created.code).toBe(0);
  auth = `token ${created.json.api_key}:${created.json.api_secret}`;
}, 60_000);

afterAll(async () => {
  await Promise.all([...running].map((p) => p.stop('SIGKILL')));
  await receiver.close();
  await database.drop();
});

describe('at-least-once delivery across process and Redis failures', () => {
  it('kill -9 of the webhooks process mid-delivery: another process delivers everything, the in-flight ones within 30 s', async () => {
    const api = await start('api');
    const path = '/kill9';
    await webhook(api.port, path);
    // Slow receiver: deliveries are in flight when the worker dies.
    receiver.respond((r) => (r.url === path ? { status: 200, delayMs: 1000 } : { status: 200 }));
    const first = await start('webhooks', { WEBHOOK_CONCURRENCY: '4' });
    await createTodos(api.port, 20, 'kill9');
    await receiver.waitFor(4, 20_000, (r) => r.url === path);
    await stop(first.p, 'SIGKILL');
    const inFlightAtKill = distinctIds(path).size;
    const second = await start('webhooks', { WEBHOOK_CONCURRENCY: '8' });
    const took = await untilDelivered(path, 20, 45_000);
    expect(took).toBeLessThan(30_000);
    expect(inFlightAtKill).toBeLessThan(20);
    await stop(second.p);
    await stop(api.p);
    receiver.respond(() => ({ status: 200 }));
  }, 120_000);

  it('the API process dies right after commit, before anything is enqueued: the sweep delivers', async () => {
    // This API cannot reach Redis at all (as if it died before enqueueing), and is killed at once.
    const api = await start('api', { REDIS_URL: 'redis://127.0.0.1:1/0' });
    const path = '/api-died';
    await webhook(api.port, path);
    await createTodos(api.port, 5, 'api-died');
    await stop(api.p, 'SIGKILL');
    const worker = await start('webhooks');
    await untilDelivered(path, 5, 20_000);
    await stop(worker.p);
  }, 120_000);

  it('Redis restarts empty: events committed before are still delivered (Redis keeps nothing but wake-ups)', async () => {
    const api = await start('api');
    const path = '/flushed';
    await webhook(api.port, path);
    await createTodos(api.port, 10, 'flushed'); // their wake-ups reached nobody: no webhooks process runs
    const redis = new Redis(redisUrl);
    expect(await redis.keys('*')).toEqual([]);
    await redis.flushdb();
    redis.disconnect();
    const worker = await start('webhooks');
    await untilDelivered(path, 10, 20_000);
    await stop(worker.p);
    await stop(api.p);
  }, 120_000);

  it('two webhooks processes draining one backlog deliver every event exactly once, with one log row each', async () => {
    const api = await start('api');
    const path = '/two-drain';
    await disableWebhooks(api.port);
    await webhook(api.port, path);
    // Slow enough that one process alone would take seconds: both claim batches at the same time.
    receiver.respond((r) => (r.url === path ? { status: 200, delayMs: 100 } : { status: 200 }));
    await insertTodos(api.port, 400, 'two-drain');
    const workers = await Promise.all([start('webhooks', { WEBHOOK_CONCURRENCY: '8' }), start('webhooks', { WEBHOOK_CONCURRENCY: '8' })]);
    await untilDelivered(path, 400, 60_000);
    expect(
      await until(
        () => outbox(path),
        (rows) => rows.length === 1 && rows[0]!.status === 'delivered',
      ),
    ).toEqual([{ status: 'delivered', attempts: 1, n: 400 }]);
    expect(receiver.received.filter((r) => r.url === path)).toHaveLength(400);
    const logs = await logRows(path);
    expect(logs).toHaveLength(400);
    expect(new Set(logs.map((l) => l.event_id)).size).toBe(400);
    expect(logs.every((l) => l.attempt === 1 && l.outcome === 'Delivered')).toBe(true);
    const delivered = await Promise.all(workers.map((w) => metric(w.port, 'quire_webhook_deliveries_total{outcome="delivered"}')));
    expect(delivered.every((n) => n > 0)).toBe(true);
    expect(delivered[0]! + delivered[1]!).toBe(400);
    receiver.respond(() => ({ status: 200 }));
    await Promise.all(workers.map((w) => stop(w.p)));
    await stop(api.p);
  }, 120_000);

  it('kill -9 mid-batch: another process delivers every event, and each recorded attempt has its log row', async () => {
    const api = await start('api');
    const path = '/kill-batch';
    await disableWebhooks(api.port);
    await webhook(api.port, path);
    receiver.respond((r) => (r.url === path ? { status: 200, delayMs: 200 } : { status: 200 }));
    await insertTodos(api.port, 300, 'kill-batch');
    const first = await start('webhooks', { WEBHOOK_CONCURRENCY: '16' });
    // Killed with requests in flight, answered attempts waiting for their write and events claimed ahead.
    await receiver.waitFor(40, 30_000, (r) => r.url === path);
    await stop(first.p, 'SIGKILL');
    const second = await start('webhooks', { WEBHOOK_CONCURRENCY: '16' });
    await untilDelivered(path, 300, 45_000);
    const final = await until(
      () => outbox(path),
      (rows) => rows.every((r) => r.status === 'delivered'),
      30_000,
    );
    expect(final.every((r) => r.status === 'delivered')).toBe(true);
    expect(final.reduce((n, r) => n + r.n, 0)).toBe(300);
    // The requests in flight at the kill were sent again (at least once), their first sending has no log row.
    expect(receiver.received.filter((r) => r.url === path).length).toBeGreaterThan(300);
    const { rows: attempts } = await database.db.query<{ id: string; attempts: number }>(
      `SELECT "id", "attempts" FROM quire.webhook_events WHERE "webhook" = $1`,
      [`hook${path.replace(/\W/g, '-')}`],
    );
    const logs = await logRows(path);
    const byEvent = new Map<string, Array<{ attempt: number; outcome: string }>>();
    for (const l of logs) byEvent.set(l.event_id, [...(byEvent.get(l.event_id) ?? []), l]);
    for (const e of attempts) {
      const rows = byEvent.get(e.id) ?? [];
      expect(
        rows.map((r) => r.attempt).sort((a, b) => a - b),
        e.id,
      ).toEqual(Array.from({ length: e.attempts }, (_, i) => i + 1));
      expect(rows.at(-1)?.outcome).toBe('Delivered');
    }
    receiver.respond(() => ({ status: 200 }));
    await stop(second.p);
    await stop(api.p);
  }, 150_000);

  it('two deployments sharing one Redis wake only their own processes (a channel per deployment)', async () => {
    const other = await freshDatabase();
    try {
      const created = await quireJson(['tenant', 'create', tenant], { DATABASE_URL: other.url });
      expect(created.code).toBe(0);
      const otherAuth = `token ${created.json.api_key}:${created.json.api_secret}`;
      // No sweep after the first: only a wake-up on the right channel delivers within the test.
      const wakeOnly = { WEBHOOK_SWEEP_INTERVAL_MS: '600000' };
      const ours = { api: await start('api'), worker: await start('webhooks', wakeOnly) };
      const theirs = { api: await start('api', { DATABASE_URL: other.url }), worker: await start('webhooks', { DATABASE_URL: other.url, ...wakeOnly }) };
      await webhook(ours.api.port, '/deployment-a');
      const hook = await call(`http://127.0.0.1:${theirs.api.port}`, tenant, 'POST', '/api/resource/Webhook', {
        auth: otherAuth,
        json: { name: 'hook-b', webhook_doctype: 'ToDo', webhook_docevent: 'after_insert', request_url: `${receiver.url}/deployment-b`, timeout: 2 },
      });
      expect(hook.status, hook.text).toBe(200);
      await createTodos(ours.api.port, 10, 'deployment-a');
      for (let i = 0; i < 10; i++) {
        const res = await call(`http://127.0.0.1:${theirs.api.port}`, tenant, 'POST', '/api/resource/ToDo', {
          auth: otherAuth,
          json: { description: `b ${i}` },
        });
        expect(res.status).toBe(200);
      }
      expect(await untilDelivered('/deployment-a', 10, 10_000)).toBeLessThan(10_000);
      expect(await untilDelivered('/deployment-b', 10, 10_000)).toBeLessThan(10_000);
      const redis = new Redis(redisUrl);
      const channels = (await redis.pubsub('CHANNELS', 'quire:*:quire-webhooks:wake')) as string[];
      redis.disconnect();
      const prefixes = new Set(channels.map((c) => c.split(':')[1]));
      expect(prefixes.size).toBeGreaterThanOrEqual(2);
      for (const p of [ours.api.p, ours.worker.p, theirs.api.p, theirs.worker.p]) await stop(p);
    } finally {
      await other.drop();
    }
  }, 120_000);

  it('several webhooks processes share the work and deliver each event', async () => {
    const api = await start('api');
    const path = '/scaled';
    await webhook(api.port, path);
    const workers = await Promise.all([start('webhooks'), start('webhooks'), start('webhooks')]);
    await createTodos(api.port, 30, 'scaled');
    await untilDelivered(path, 30, 30_000);
    const duplicates = receiver.received.filter((r) => r.url === path).length - 30;
    expect(duplicates).toBeLessThanOrEqual(3);
    await Promise.all(workers.map((w) => stop(w.p)));
    await stop(api.p);
  }, 120_000);
});
