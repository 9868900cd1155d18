import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quireJson, spawnQuire, type Spawned } from '../support/process';
import { startReceiver, type Receiver } from '../support/receiver';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { call } from '../support/server';

/**
 * Nothing lost, with real processes: `quire serve api` enqueues into BullMQ on Redis and
 * `quire serve webhooks` delivers. Every event arrives after kill -9 of the webhooks process
 * mid-delivery, after the API process dies right after commit, and after Redis is flushed —
 * because Postgres (the outbox) is the source of truth and the webhooks process sweeps it.
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
  WEBHOOK_LOCK_DURATION_MS: '4000',
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

  it('Redis restarts empty: events queued before the flush are still delivered', async () => {
    const api = await start('api');
    const path = '/flushed';
    await webhook(api.port, path);
    await createTodos(api.port, 10, 'flushed'); // queued in Redis, nobody consuming
    const redis = new Redis(redisUrl);
    expect(await redis.keys('quire:*:quire-webhooks:*')).not.toHaveLength(0);
    await redis.flushdb();
    redis.disconnect();
    const worker = await start('webhooks');
    await untilDelivered(path, 10, 20_000);
    await stop(worker.p);
    await stop(api.p);
  }, 120_000);

  it('a backlog holds one job per event: the sweep never queues a twin of what the API queued', async () => {
    const api = await start('api');
    const path = '/backlog';
    await webhook(api.port, path);
    receiver.respond((r) => (r.url === path ? { status: 200, delayMs: 400 } : { status: 200 }));
    await createTodos(api.port, 12, 'backlog'); // queued by the API, nobody consuming yet
    // One slow delivery at a time: the backlog stays while the sweep (every 500 ms) looks at it.
    const worker = await start('webhooks', { WEBHOOK_CONCURRENCY: '1' });
    await new Promise((r) => setTimeout(r, 1200)); // two sweeps or more
    const redis = new Redis(redisUrl);
    const jobs = (await redis.keys('quire:*:quire-webhooks:*')).map((k) => /:([0-9a-f-]{36})_([^:]+)$/.exec(k)).filter((m) => m !== null);
    redis.disconnect();
    expect(jobs.length).toBeGreaterThan(0);
    const perAttempt = new Map<string, number>();
    for (const m of jobs) perAttempt.set(m[1]!, (perAttempt.get(m[1]!) ?? 0) + 1);
    expect([...perAttempt.values()].every((n) => n === 1)).toBe(true);
    await untilDelivered(path, 12, 30_000);
    expect(receiver.received.filter((r) => r.url === path)).toHaveLength(12);
    receiver.respond(() => ({ status: 200 }));
    await stop(worker.p);
    await stop(api.p);
  }, 120_000);

  it('two deployments sharing one Redis keep their queues apart (a prefix per deployment)', async () => {
    const other = await freshDatabase();
    try {
      const created = await quireJson(['tenant', 'create', tenant], { DATABASE_URL: other.url });
      expect(created.code).toBe(0);
      const otherAuth = `token ${created.json.api_key}:${created.json.api_secret}`;
      const ours = { api: await start('api'), worker: await start('webhooks') };
      const theirs = { api: await start('api', { DATABASE_URL: other.url }), worker: await start('webhooks', { DATABASE_URL: other.url }) };
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
      // Each worker takes only its own deployment's jobs, so both deliver at once (no waiting for a sweep).
      expect(await untilDelivered('/deployment-a', 10, 10_000)).toBeLessThan(10_000);
      expect(await untilDelivered('/deployment-b', 10, 10_000)).toBeLessThan(10_000);
      const redis = new Redis(redisUrl);
      const prefixes = new Set((await redis.keys('quire:*:quire-webhooks:*')).map((k) => k.split(':')[1]));
      redis.disconnect();
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
