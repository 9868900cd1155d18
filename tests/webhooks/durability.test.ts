import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quireJson, spawnQuire, type Spawned } from '../support/process';
import { startReceiver, type Receiver } from '../support/receiver';
import { call, databaseUrl } from '../support/server';

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

const baseEnv = () => ({
  DATABASE_URL: databaseUrl(),
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
  const redis = new Redis(redisUrl);
  await redis.flushdb();
  redis.disconnect();
  receiver = await startReceiver();
  const created = await quireJson(['tenant', 'create', tenant], { DATABASE_URL: databaseUrl() });
  expect(created.code).toBe(0);
  auth = `token ${created.json.api_key}:${created.json.api_secret}`;
}, 60_000);

afterAll(async () => {
  await Promise.all([...running].map((p) => p.stop('SIGKILL')));
  await receiver.close();
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
    expect(await redis.keys('bull:quire-webhooks:*')).not.toHaveLength(0);
    await redis.flushdb();
    redis.disconnect();
    const worker = await start('webhooks');
    await untilDelivered(path, 10, 20_000);
    await stop(worker.p);
    await stop(api.p);
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
