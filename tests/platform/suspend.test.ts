import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quireJson } from '../support/process';
import { call, databaseUrl, startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';

/**
 * `quire tenant suspend [--read-only]` and `quire tenant resume` (issue 27, item 5): a suspended
 * tenant is answered 503 everywhere, a read-only one serves reads and refuses writes with 503
 * InReadOnlyMode before anything is written; other tenants are untouched; every API process
 * follows within a second.
 */

let one: TestServer;
let two: TestServer;

beforeAll(async () => {
  [one, two] = await Promise.all([startTestServer(), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([one.close(), two.close()]);
});

const quire = (args: string[]) => quireJson(['tenant', ...args], { DATABASE_URL: databaseUrl() });
const ping = (server: TestServer, t: TestTenant) => call(server.url, t.name, 'GET', '/api/resource/ToDo', { auth: t.auth });

/** Waits until `server` answers the tenant's list with `status`, and says how long that took. */
async function within(server: TestServer, t: TestTenant, status: number): Promise<number> {
  const started = performance.now();
  const res = await until(
    () => ping(server, t),
    (r) => r.status === status,
    3000,
  );
  expect(res.status).toBe(status);
  return performance.now() - started;
}

describe('suspended and read-only tenants', () => {
  it('a suspended tenant is answered 503 by every process within a second, others untouched; resumed, it is served again', async () => {
    const t = await one.tenant('su');
    const other = await one.tenant('su');
    expect((await quire(['suspend', t.name])).json).toEqual({ name: t.name, status: 'suspended' });
    expect(await within(one, t, 503)).toBeLessThan(1000);
    expect(await within(two, t, 503)).toBeLessThan(1000);
    const res = await ping(two, t);
    expect(res.body).toMatchObject({ exc_type: 'SessionStopped' });
    expect(res.text).toContain('suspended');
    expect((await ping(two, other)).status).toBe(200);

    expect((await quire(['resume', t.name])).json).toEqual({ name: t.name, status: 'active' });
    expect(await within(two, t, 200)).toBeLessThan(1000);
  });

  it('a read-only tenant serves reads and refuses writes with 503 InReadOnlyMode, writing nothing; signing in still works', async () => {
    const t = await one.tenant('ro');
    const made = await t.call('POST', '/api/resource/ToDo', { json: { description: 'before' } });
    const name = made.body.data.name as string;
    expect((await quire(['suspend', t.name, '--read-only'])).json).toEqual({ name: t.name, status: 'read_only' });
    await until(
      () => Promise.resolve(two.platform.tenants.get(t.name)?.status),
      (s) => s === 'read_only',
    );

    const at = (path: string, method = 'GET', json?: unknown) => call(two.url, t.name, method, path, { auth: t.auth, ...(json === undefined ? {} : { json }) });
    expect((await at('/api/resource/ToDo')).status).toBe(200);
    expect((await at(`/api/resource/ToDo/${name}`)).body.data.description).toBe('before');
    for (const [method, path, json] of [
      ['POST', '/api/resource/ToDo', { description: 'after' }],
      ['PUT', `/api/resource/ToDo/${name}`, { description: 'changed' }],
      ['DELETE', `/api/resource/ToDo/${name}`, undefined],
      ['POST', '/api/method/frappe.client.set_value', { doctype: 'ToDo', name, fieldname: 'description', value: 'changed' }],
    ] as const) {
      const res = await at(path, method, json);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.body, `${method} ${path}`).toMatchObject({ exc_type: 'InReadOnlyMode' });
    }
    const list = await at('/api/resource/ToDo?fields=%5B%22description%22%5D');
    expect(list.body.data).toEqual([{ description: 'before' }]);
    // Signing in changes no document: it works (with a wrong password, the usual 401).
    expect((await call(two.url, t.name, 'POST', '/api/method/login', { auth: null, json: { usr: 'Administrator', pwd: 'wrong' } })).status).toBe(401);

    await quire(['resume', t.name]);
    await until(
      () => Promise.resolve(two.platform.tenants.get(t.name)?.status),
      (s) => s === 'active',
    );
    expect((await at('/api/resource/ToDo', 'POST', { description: 'after' })).status).toBe(200);
  });
});
