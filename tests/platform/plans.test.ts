import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upload } from '../files/helpers';
import { quireJson, ROOT } from '../support/process';
import { call, databaseUrl, startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';
import { readUsage } from '@quire/tenancy';
import { freshDatabase } from './migrate-support';
import { expectError, expectOk } from './helpers';

/**
 * Plans (issue 27, item 3): named bundles of limits from QUIRE_PLANS, a tenant's plan set with
 * `quire tenant create/set --plan`; what each limit does, through HTTP. Storage limits refuse what
 * would grow the tenant (QuotaExceededError, 417) and leave what is stored readable.
 */

const PLANS = {
  default: 'free',
  plans: {
    free: { maxPageLength: 5, users: 2, fileStorage: 3000 },
    pro: { maxPageLength: 100, rateLimit: '600/3600' },
    // Any database is over one byte: new documents are refused as soon as the tenant is measured.
    full: { databaseSize: 1 },
    narrow: { maxConnections: 1 },
    brisk: { statementTimeoutMs: 300 },
  },
};
const LAB_APP = path.join(ROOT, 'tests/fixtures/apps/lab_app');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ plans: PLANS, apps: [LAB_APP], usage: { flushMs: 200, measureMs: 3_600_000 } });
});
afterAll(() => server.close());

const quire = (args: string[]) => quireJson(args, { DATABASE_URL: databaseUrl(), QUIRE_PLANS: JSON.stringify(PLANS) });

/** Sets the tenant's plan and waits until the server has it. */
async function setPlan(t: TestTenant, plan: string): Promise<void> {
  const set = await quire(['tenant', 'set', t.name, '--plan', plan]);
  expect(set.code).toBe(0);
  await until(
    () => Promise.resolve(server.platform.tenants.get(t.name)),
    (tenant) => tenant !== undefined && server.platform.limitsOf(tenant).plan === (plan || PLANS.default),
  );
}

async function todos(t: TestTenant, count: number): Promise<void> {
  for (let i = 0; i < count; i++) expectOk(await t.call('POST', '/api/resource/ToDo', { json: { description: `todo ${i}` } }));
}

describe('plans', () => {
  it('quire tenant create --plan and set --plan take the plans QUIRE_PLANS defines, and refuse others', async () => {
    const made = await quire(['tenant', 'create', `pl${Date.now().toString(36)}`, '--plan', 'pro']);
    expect(made.code).toBe(0);
    expect(made.json.plan).toBe('pro');
    const name = made.json.name as string;
    const listed = await quire(['tenant', 'list']);
    expect(listed.json.tenants.find((t: { name: string }) => t.name === name)).toMatchObject({ plan: 'pro' });

    const unknown = await quire(['tenant', 'set', name, '--plan', 'platinum']);
    expect(unknown.code).not.toBe(0);
    const refusedCreate = await quire(['tenant', 'create', `pl${Date.now().toString(36)}x`, '--plan', 'platinum']);
    expect(refusedCreate.code).not.toBe(0);
    // "" goes back to the default plan.
    const back = await quire(['tenant', 'set', name, '--plan', '']);
    expect(back.code).toBe(0);
    expect(back.json.config.plan).toBeUndefined();
    const after = await quire(['tenant', 'list']);
    expect(after.json.tenants.find((t: { name: string }) => t.name === name)).toMatchObject({ plan: 'free' });
  });

  it('a list returns at most the plan’s page length, on every list path; another plan lifts it', async () => {
    const t = await server.tenant('pg');
    await todos(t, 8);
    const lengths = async () => [
      (await t.call('GET', '/api/resource/ToDo', { query: { limit_page_length: 0 } })).body.data.length,
      (await t.call('GET', '/api/v2/document/ToDo', { query: { limit: 50 } })).body.data.length,
      (await t.call('POST', '/api/method/frappe.client.get_list', { json: { doctype: 'ToDo', limit_page_length: 0 } })).body.message.length,
    ];
    expect(await lengths()).toEqual([5, 5, 5]);
    await setPlan(t, 'pro');
    expect(await lengths()).toEqual([8, 8, 8]);
  });

  it('users beyond the plan are refused with QuotaExceededError, nothing written; disabled users do not count', async () => {
    const t = await server.tenant('us');
    const user = (n: number, enabled = 1) => t.call('POST', '/api/resource/User', { json: { email: `u${n}@example.com`, first_name: `U${n}`, enabled } });
    expectOk(await user(1));
    expectOk(await user(2, 0));
    expectOk(await user(3));
    const third = await user(4);
    expectError(third, 417, 'QuotaExceededError');
    expect(third.text).toContain('allows 2 users');
    expectError(await t.call('GET', '/api/resource/User/u4@example.com'), 404, 'DoesNotExistError');
    // A plan without a user limit takes them.
    await setPlan(t, 'pro');
    expectOk(await user(4));
  });

  it('an upload past the plan’s file storage is refused, and what was stored stays readable', async () => {
    const t = await server.tenant('fs');
    const first = await upload(server.url, t, 'a'.repeat(2000), 'first.txt');
    expectOk(first);
    const second = await upload(server.url, t, 'b'.repeat(1500), 'second.txt');
    expectError(second, 417, 'QuotaExceededError');
    expect(second.text).toContain('File Storage Full');
    const files = await t.call('GET', '/api/resource/File', { query: { fields: '["file_name"]', filters: '[["is_folder","=",0]]' } });
    expect(files.body.data).toEqual([{ file_name: 'first.txt' }]);
    const read = await fetch(new URL(first.body.message.file_url as string, server.url), { headers: { 'X-Frappe-Site-Name': t.name } });
    expect(await read.text()).toBe('a'.repeat(2000));
    // Room made by deleting is room to upload again.
    expectOk(await t.call('DELETE', `/api/resource/File/${first.body.message.name as string}`, {}), 202);
    expectOk(await upload(server.url, t, 'b'.repeat(1500), 'second.txt'));
  });

  it('once its database is measured at its plan’s size, new documents are refused; reads, edits and deletes go on', async () => {
    const t = await server.tenant('db');
    const made = await t.call('POST', '/api/resource/ToDo', { json: { description: 'kept' } });
    const name = made.body.data.name as string;
    await setPlan(t, 'full');
    const measured = await quire(['tenant', 'usage', t.name, '--measure']);
    expect(measured.json.tenants[0].databaseBytes).toBeGreaterThan(0);
    // The processes read the measure with the registry (CACHE_REFRESH_INTERVAL_MS).
    await until(
      () => Promise.resolve(server.platform.tenants.get(t.name)?.databaseBytes),
      (bytes) => bytes !== undefined,
      3000,
    );
    const refused = await t.call('POST', '/api/resource/ToDo', { json: { description: 'more' } });
    expectError(refused, 417, 'QuotaExceededError');
    expect(refused.text).toContain('Database Full');
    expect((await t.call('GET', `/api/resource/ToDo/${name}`)).body.data.description).toBe('kept');
    expectOk(await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { description: 'edited' } }));
    expectError(
      await t.call('POST', '/api/method/frappe.client.insert', { json: { doc: { doctype: 'ToDo', description: 'more' } } }),
      417,
      'QuotaExceededError',
    );
    const list = await t.call('GET', '/api/resource/ToDo', { query: { fields: '["description"]' } });
    expect(list.body.data).toEqual([{ description: 'edited' }]);
    expectOk(await t.call('DELETE', `/api/resource/ToDo/${name}`, {}), 202);
    // Another tenant is untouched, and a larger plan takes new documents again.
    const other = await server.tenant('db');
    expectOk(await other.call('POST', '/api/resource/ToDo', { json: { description: 'fine' } }));
    await setPlan(t, 'pro');
    expectOk(await t.call('POST', '/api/resource/ToDo', { json: { description: 'again' } }));
  });

  it('the plan’s connection share holds its requests to one at a time; another tenant is served meanwhile', async () => {
    const narrow = await server.tenant('cn');
    await setPlan(narrow, 'narrow');
    const started = performance.now();
    const pauses = await Promise.all([0, 1, 2].map(() => narrow.call('GET', '/api/method/lab_app.api.pause', { query: { ms: 300 } })));
    const narrowMs = performance.now() - started;
    expect(pauses.map((r) => r.status)).toEqual([200, 200, 200]);
    // One at a time: three pauses of 300 ms take at least 900 ms.
    expect(narrowMs).toBeGreaterThanOrEqual(880);

    const wide = await server.tenant('cw');
    await setPlan(wide, 'pro');
    const wideStarted = performance.now();
    await Promise.all([0, 1, 2].map(() => wide.call('GET', '/api/method/lab_app.api.pause', { query: { ms: 300 } })));
    expect(performance.now() - wideStarted).toBeLessThan(880);
  });

  it('a statement longer than the plan’s timeout is cut short: QueryTimeoutError naming the limit, no SQL; shorter ones run', async () => {
    const t = await server.tenant('st');
    await setPlan(t, 'brisk');
    for (const where of ['query', 'transaction']) {
      const slow = (ms: number) => t.call('GET', '/api/method/lab_app.api.slow_query', { query: { ms, in: where } });
      expectOk(await slow(50));
      const started = performance.now();
      const cut = await slow(3000);
      expect(performance.now() - started, where).toBeLessThan(2000);
      expectError(cut, 500, 'QueryTimeoutError');
      expect(cut.text).toContain('300 ms');
      expect(cut.text).not.toMatch(/pg_sleep|canceling statement/);
    }
    // Another plan has the pool's timeout (30 s), and the connection it ran on keeps that.
    const other = await server.tenant('st');
    expectOk(await other.call('GET', '/api/method/lab_app.api.slow_query', { query: { ms: 400, in: 'transaction' } }));
    expectOk(await other.call('GET', '/api/method/lab_app.api.slow_query', { query: { ms: 400 } }));
  });

  it('the plan’s rate limit applies unless the tenant has its own', async () => {
    const t = await server.tenant('rl');
    await setPlan(t, 'pro');
    const res = await t.call('GET', '/api/method/ping');
    expect(res.headers.get('x-ratelimit-limit')).toBe(String(600 * 1_000_000));
    const own = await quire(['tenant', 'set', t.name, '--rate-limit', '60/3600']);
    expect(own.code).toBe(0);
    await until(
      async () => (await t.call('GET', '/api/method/ping')).headers.get('x-ratelimit-limit'),
      (limit) => limit === String(60 * 1_000_000),
      3000,
    );
    const free = await server.tenant('rl');
    expect((await free.call('GET', '/api/method/ping')).headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('usage metering', () => {
  it('counts each tenant’s requests and their request and database time, adds them up in the platform table, and measures what it keeps', async () => {
    const t = await server.tenant('um');
    const other = await server.tenant('um');
    for (let i = 0; i < 6; i++) expectOk(await t.call('GET', '/api/resource/ToDo'));
    expectOk(await other.call('GET', '/api/method/ping'));
    const usage = await until(
      async () => (await quire(['tenant', 'usage', t.name, other.name])).json.tenants as Array<Record<string, any>>,
      (rows) => rows.find((r) => r.name === t.name)?.today.requests === 6 && rows.find((r) => r.name === other.name)?.today.requests === 1,
      5000,
    );
    const mine = usage.find((r) => r.name === t.name)!;
    expect(mine.plan).toBe('free');
    expect(mine.today.requestSeconds).toBeGreaterThan(0);
    expect(mine.today.dbSeconds).toBeGreaterThan(0);
    expect(mine.today.dbSeconds).toBeLessThanOrEqual(mine.today.requestSeconds);
    expect(mine.last30Days.requests).toBe(6);
    expect(mine.limits).toMatchObject({ users: 2, fileBytes: 3000, maxPageLength: 5, databaseBytes: null });

    const measured = await quire(['tenant', 'usage', t.name, '--measure']);
    expect(measured.json.tenants[0]).toMatchObject({ users: 0, fileBytes: 0 });
    expect(measured.json.tenants[0].databaseBytes).toBeGreaterThan(100_000);
    expect(measured.json.tenants[0].measuredAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('measures tenants by itself every USAGE_MEASURE_MS, shared between processes; an idle tenant is not measured again', async () => {
    // A database of its own: the suite's holds every other file's tenants, all due for a first measure.
    const database = await freshDatabase();
    const [one, two] = await Promise.all([0, 1].map(() => startTestServer({ databaseUrl: database.url, usage: { flushMs: 100, measureMs: 500 } })));
    try {
      const busy = await one!.tenant('ms');
      const idle = await one!.tenant('ms');
      const measured = async (name: string) => (await readUsage(database.db, [name]))[0]!;
      await until(
        () => measured(idle.name),
        (u) => u.databaseBytes !== null,
        10_000,
      );
      const first = await until(
        () => measured(busy.name),
        (u) => u.databaseBytes !== null,
        10_000,
      );
      expect(first.databaseBytes).toBeGreaterThan(0);
      const idleAt = (await measured(idle.name)).measuredAt;
      // The busy tenant has requests (on the second process too): measured again after the period.
      for (let i = 0; i < 3; i++) expectOk(await busy.call('POST', '/api/resource/ToDo', { json: { description: `t${i}` } }));
      expectOk(await call(two!.url, busy.name, 'GET', '/api/resource/ToDo', { auth: busy.auth }));
      await until(
        () => measured(busy.name),
        (u) => u.measuredAt !== first.measuredAt && u.today.requests === 4,
        10_000,
      );
      expect((await measured(idle.name)).measuredAt).toBe(idleAt);
    } finally {
      await Promise.all([one?.close(), two?.close()]);
      await database.drop();
    }
  });

  it('quire tenant usage names an unknown tenant as such', async () => {
    const res = await quire(['tenant', 'usage', 'no-such-tenant']);
    expect(res.code).not.toBe(0);
  });

  it('per-tenant request and database seconds are Prometheus series only with METRICS_TENANT_LABEL', async () => {
    const labelled = await startTestServer({ metricsTenantLabel: true });
    try {
      const t = await labelled.tenant('pm');
      expectOk(await t.call('GET', '/api/resource/ToDo'));
      const text = await (await fetch(`${labelled.opsUrl}/metrics`)).text();
      expect(text).toMatch(new RegExp(`^quire_tenant_request_seconds_total\\{tenant="${t.name}"\\} [0-9.e-]+$`, 'm'));
      expect(text).toMatch(new RegExp(`^quire_tenant_database_seconds_total\\{tenant="${t.name}"\\} [0-9.e-]+$`, 'm'));
    } finally {
      await labelled.close();
    }
    const plain = await (await fetch(`${server.opsUrl}/metrics`)).text();
    expect(plain).not.toContain('quire_tenant_request_seconds_total');
  });
});
