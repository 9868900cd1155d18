import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { updateTenantConfig } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quireJson, ROOT } from '../support/process';
import { call, databaseUrl, startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';

/**
 * Frappe's site rate limit, per tenant (issue 27, item 2): seconds of request time per window, 429
 * TooManyRequestsError with Retry-After beyond, Frappe's X-RateLimit-* headers (microseconds),
 * counted across API processes: through Redis when REDIS_URL is set, else through Postgres.
 */

const LAB_APP = path.join(ROOT, 'tests/fixtures/apps/lab_app');
const redis = { url: 'redis://127.0.0.1:6379/13', prefix: `rl-${randomBytes(4).toString('hex')}` };
let withRedis: [TestServer, TestServer];
let withPostgres: [TestServer, TestServer];

beforeAll(async () => {
  const [a, b, c, d] = await Promise.all([
    startTestServer({ apps: [LAB_APP], redis }),
    startTestServer({ apps: [LAB_APP], redis }),
    startTestServer({ apps: [LAB_APP] }),
    startTestServer({ apps: [LAB_APP] }),
  ]);
  withRedis = [a, b];
  withPostgres = [c, d];
}, 60_000);
afterAll(async () => {
  await Promise.all([...withRedis, ...withPostgres].map((s) => s.close()));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sets the tenant's rate limit through `server` and waits until `others` see it too. */
async function limit(server: TestServer, t: TestTenant, seconds: number, window: number, others: TestServer[] = []): Promise<void> {
  await updateTenantConfig(server.platform, t.name, { rate_limit: { limit: seconds, window } });
  for (const o of others)
    await until(
      () => Promise.resolve(o.platform.tenants.get(t.name)?.config.rate_limit?.limit),
      (v) => v === seconds,
    );
}

/** Waits until a `window`-second window has just begun, so what follows happens inside one window. */
async function startOfWindow(window: number): Promise<void> {
  const into = Date.now() % (window * 1000);
  if (into > 500) await sleep(window * 1000 - into + 20);
}

const pause = (server: TestServer, t: TestTenant, ms: number) =>
  call(server.url, t.name, 'GET', '/api/method/lab_app.api.pause', { auth: t.auth, query: { ms } });

describe("Frappe's site rate limit, per tenant", () => {
  it('answers carry X-RateLimit-Limit, -Remaining and -Used in microseconds and -Reset in seconds; other tenants carry none', async () => {
    const [server] = withPostgres;
    const t = await server.tenant('rh');
    const other = await server.tenant('rh');
    await limit(server, t, 2, 60);
    const res = await t.call('GET', '/api/method/ping');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('2000000');
    const remaining = Number(res.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBeGreaterThan(1_900_000);
    expect(remaining).toBeLessThanOrEqual(2_000_000);
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeLessThanOrEqual(60);
    expect(Number(res.headers.get('x-ratelimit-used'))).toBeGreaterThan(0);
    expect((await other.call('GET', '/api/method/ping')).headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('refuses with 429 TooManyRequestsError and Retry-After once the window’s time is used, other tenants untouched, and serves again in the next window', async () => {
    const [server] = withPostgres;
    const t = await server.tenant('rw');
    const other = await server.tenant('rw');
    await limit(server, t, 0.3, 4);
    await startOfWindow(4);
    expect((await pause(server, t, 400)).status).toBe(200);
    const refused = await t.call('GET', '/api/method/ping');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ exc_type: 'TooManyRequestsError' });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(4);
    expect((await other.call('GET', '/api/method/ping')).status).toBe(200);
    await sleep(retryAfter * 1000 + 50);
    expect((await t.call('GET', '/api/method/ping')).status).toBe(200);
    // Lifted (`0/…` on the command line): no headers, no limit.
    const lifted = await quireJson(['tenant', 'set', t.name, '--rate-limit', `0/4`], { DATABASE_URL: databaseUrl() });
    expect(lifted.code).toBe(0);
    await until(
      () => Promise.resolve(server.platform.tenants.get(t.name)?.config.rate_limit),
      (v) => v === undefined,
    );
    expect((await t.call('GET', '/api/method/ping')).headers.get('x-ratelimit-limit')).toBeNull();
  });

  for (const [store, servers] of [
    ['Redis', () => withRedis],
    ['Postgres (no REDIS_URL)', () => withPostgres],
  ] as const) {
    it(`is counted across API processes through ${store}`, async () => {
      const [one, two] = servers();
      const t = await one.tenant('rx');
      await limit(one, t, 0.3, 6, [two]);
      await startOfWindow(6);
      // The second process serves the tenant too, and so follows its window.
      expect((await call(two.url, t.name, 'GET', '/api/method/ping', { auth: t.auth })).status).toBe(200);
      expect((await pause(one, t, 400)).status).toBe(200);
      const refused = await until(
        () => call(two.url, t.name, 'GET', '/api/method/ping', { auth: t.auth }),
        (r) => r.status === 429,
        5000,
      );
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
    });
  }

  it('`quire tenant set --rate-limit` takes <seconds>/<window> and refuses anything else', async () => {
    const [server] = withPostgres;
    const t = await server.tenant('rc');
    const set = await quireJson(['tenant', 'set', t.name, '--rate-limit', '60/3600'], { DATABASE_URL: databaseUrl() });
    expect(set.code).toBe(0);
    expect(set.json.config).toMatchObject({ rate_limit: { limit: 60, window: 3600 } });
    const bad = await quireJson(['tenant', 'set', t.name, '--rate-limit', 'lots'], { DATABASE_URL: databaseUrl() });
    expect(bad.code).not.toBe(0);
  });
});
