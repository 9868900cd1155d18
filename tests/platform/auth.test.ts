import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qualified } from '@quire/db';
import { startTestServer, type TestServer } from '../support/server';
import { createRole, createUser, expectError, expectOk, issueKeys } from './helpers';

/** Authentication: API key and secret in the Authorization header (frappe/auth.py::validate_auth). */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const WHO = '/api/method/frappe.auth.get_logged_user';
const basic = (s: string) => `Basic ${Buffer.from(s, 'utf8').toString('base64')}`;

describe('API key authentication', () => {
  it('accepts `token key:secret`', async () => {
    const t = await server.tenant();
    const res = await t.call('GET', WHO, { auth: `token ${t.api_key}:${t.api_secret}` });
    expect([res.status, res.body]).toEqual([200, { message: 'Administrator' }]);
  });

  it('accepts the token scheme in any letter case', async () => {
    const t = await server.tenant();
    for (const scheme of ['Token', 'TOKEN']) {
      const res = await t.call('GET', WHO, { auth: `${scheme} ${t.api_key}:${t.api_secret}` });
      expect([res.status, res.body], scheme).toEqual([200, { message: 'Administrator' }]);
    }
  });

  it('accepts `Basic base64(key:secret)`', async () => {
    const t = await server.tenant();
    const res = await t.call('GET', WHO, { auth: basic(`${t.api_key}:${t.api_secret}`) });
    expect([res.status, res.body]).toEqual([200, { message: 'Administrator' }]);
    const list = await t.call('GET', '/api/resource/ToDo', { auth: basic(`${t.api_key}:${t.api_secret}`) });
    expect([list.status, list.body]).toEqual([200, { data: [] }]);
  });

  it('authenticates a non-Administrator user as that user', async () => {
    const t = await server.tenant();
    const u = await createUser(server, t, 'someone@example.com', []);
    const res = await t.call('GET', WHO, { auth: u.auth });
    expect([res.status, res.body]).toEqual([200, { message: 'someone@example.com' }]);
    const basicRes = await t.call('GET', WHO, { auth: basic(`${u.api_key}:${u.api_secret}`) });
    expect([basicRes.status, basicRes.body]).toEqual([200, { message: 'someone@example.com' }]);
  });

  it('refuses a wrong secret with 401 AuthenticationError', async () => {
    const t = await server.tenant();
    expectError(await t.call('GET', WHO, { auth: `token ${t.api_key}:${t.api_secret}x` }), 401, 'AuthenticationError');
    expectError(await t.call('GET', WHO, { auth: `token ${t.api_key}:` }), 401, 'AuthenticationError');
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: basic(`${t.api_key}:wrong`) }), 401, 'AuthenticationError');
    // a write with a wrong secret changes nothing
    expectError(await t.call('POST', '/api/resource/ToDo', { auth: `token ${t.api_key}:nope`, json: { description: 'x' } }), 401, 'AuthenticationError');
    expect((await t.call('GET', '/api/resource/ToDo')).body).toEqual({ data: [] });
  });

  it('refuses an unknown key with 401 AuthenticationError', async () => {
    const t = await server.tenant();
    expectError(await t.call('GET', WHO, { auth: `token 0123456789abcde:${t.api_secret}` }), 401, 'AuthenticationError');
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: basic(`0123456789abcde:${t.api_secret}`) }), 401, 'AuthenticationError');
  });

  it('refuses a token without a colon, and a decodable Basic value without one, with 401', async () => {
    const t = await server.tenant();
    expectError(await t.call('GET', WHO, { auth: `token ${t.api_key}` }), 401, 'AuthenticationError');
    expectError(await t.call('GET', WHO, { auth: basic(`${t.api_key}${t.api_secret}`) }), 401, 'AuthenticationError');
  });

  it('answers an undecodable Basic value with 400', async () => {
    const t = await server.tenant();
    const res = await t.call('GET', '/api/resource/ToDo', { auth: 'Basic %%%not-base64%%%' });
    expectError(res, 400, 'InvalidAuthorizationToken');
  });

  it('ignores an Authorization header of one part: the caller is Guest', async () => {
    const t = await server.tenant();
    expectOk(await t.call('POST', '/api/resource/ToDo', { json: { description: 'admin only' } }));
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: 'foo' }), 403, 'PermissionError');
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: `${t.api_key}:${t.api_secret}` }), 403, 'PermissionError');
    // three parts are ignored too
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: `token ${t.api_key}:${t.api_secret} extra` }), 403, 'PermissionError');
  });

  it('refuses `Bearer x` with 401', async () => {
    const t = await server.tenant();
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: 'Bearer x' }), 401, 'AuthenticationError');
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: `Bearer ${t.api_key}:${t.api_secret}` }), 401, 'AuthenticationError');
  });
});

describe('secrets at rest', () => {
  it('stores the API secret only as a hash, and tabUser.api_secret holds asterisks', async () => {
    const t = await server.tenant();
    const { rows } = await server.db.query<{ name: string; fieldname: string; password: string }>(
      `SELECT "name", "fieldname", "password" FROM "${t.schema}"."__Auth"`,
    );
    const row = rows.find((r) => r.name === 'Administrator' && r.fieldname === 'api_secret');
    expect(row).toBeDefined();
    for (const r of rows) {
      expect(r.password).not.toContain(t.api_secret);
      expect(r.password).not.toContain(Buffer.from(t.api_secret).toString('base64'));
    }
    expect(row!.password).not.toBe(t.api_secret);
    const user = await server.db.query<{ api_key: string; api_secret: string }>(
      `SELECT "api_key", "api_secret" FROM "${t.schema}"."tabUser" WHERE "name" = 'Administrator'`,
    );
    expect(user.rows[0]!.api_key).toBe(t.api_key);
    expect(user.rows[0]!.api_secret).toMatch(/^\*+$/);
    // and the API shows no secret either
    const doc = await t.call('GET', '/api/resource/User/Administrator');
    expect(doc.text).not.toContain(t.api_secret);
  });

  it('issues API secrets with at least 128 bits of entropy', async () => {
    const t = await server.tenant();
    const hex = /^[0-9a-f]+$/i.test(t.api_secret);
    const bits = hex ? t.api_secret.length * 4 : t.api_secret.length * 5;
    expect(bits).toBeGreaterThanOrEqual(128);
  });
});

describe('credential changes take effect at once', () => {
  /**
   * Rotates the user's secret `times` times, each time right after the current key was verified
   * (and so cached) by this process; reports the rotations after which the very next request
   * with the old secret was accepted, and those after which the new secret was refused.
   * Repeated because a stale cache entry only shows when that request beats the notification.
   */
  async function rotate(t: Awaited<ReturnType<TestServer['tenant']>>, user: string, auth: string, times: number, probe: 'old' | 'new') {
    const oldAccepted: number[] = [];
    const newRefused: number[] = [];
    for (let i = 0; i < times; i++) {
      const warm = await t.call('GET', WHO, { auth });
      expect(warm.status).toBeLessThan(500);
      const fresh = await issueKeys(server, t, user);
      if (probe === 'old') {
        const old = await t.call('GET', WHO, { auth });
        if (old.status !== 401 || old.body?.exc_type !== 'AuthenticationError') oldAccepted.push(i);
      }
      auth = `token ${fresh.api_key}:${fresh.api_secret}`;
      if (probe === 'new') {
        const now = await t.call('GET', WHO, { auth });
        if (now.status !== 200 || now.body?.message !== user) newRefused.push(i);
      }
    }
    return { oldAccepted, newRefused };
  }

  it('refuses the old secret on the very next request after the secret is regenerated', async () => {
    const t = await server.tenant();
    const u = await createUser(server, t, 'rotate@example.com', []);
    const { oldAccepted } = await rotate(t, u.email, u.auth, 40, 'old');
    expect(oldAccepted, 'rotations after which the old secret was still accepted').toEqual([]);
  });

  it('accepts the new secret on the very next request after the secret is regenerated', async () => {
    const t = await server.tenant();
    const u = await createUser(server, t, 'rotate@example.com', []);
    const { newRefused } = await rotate(t, u.email, u.auth, 40, 'new');
    expect(newRefused, 'rotations after which the new secret was refused').toEqual([]);
  });

  it('keeps the API key when the secret is regenerated', async () => {
    const t = await server.tenant();
    const u = await createUser(server, t, 'keeper@example.com', []);
    const fresh = await issueKeys(server, t, u.email);
    expect(fresh.api_key).toBe(u.api_key);
    expect(fresh.api_secret).not.toBe(u.api_secret);
  });

  it('refuses a user on the next request once the user is disabled', async () => {
    const t = await server.tenant();
    const u = await createUser(server, t, 'leaver@example.com', []);
    expect((await t.call('GET', WHO, { auth: u.auth })).status).toBe(200);
    const put = await t.call('PUT', '/api/resource/User/leaver@example.com', { json: { enabled: 0 } });
    expectOk(put);
    expect(put.body.data.enabled).toBe(0);
    expectError(await t.call('GET', WHO, { auth: u.auth }), 401, 'AuthenticationError');
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: basic(`${u.api_key}:${u.api_secret}`) }), 401, 'AuthenticationError');
    // enabled again, the same key works again
    expectOk(await t.call('PUT', '/api/resource/User/leaver@example.com', { json: { enabled: 1 } }));
    expect((await t.call('GET', WHO, { auth: u.auth })).status).toBe(200);
  });

  it("applies a role change to the user's next request", async () => {
    const t = await server.tenant();
    await createRole(t, 'Clerk');
    const u = await createUser(server, t, 'promoted@example.com', ['Clerk']);
    expectError(await t.call('GET', '/api/resource/User', { auth: u.auth }), 403, 'PermissionError');
    expectOk(await t.call('PUT', '/api/resource/User/promoted@example.com', { json: { roles: [{ role: 'Clerk' }, { role: 'System Manager' }] } }));
    expectOk(await t.call('GET', '/api/resource/User', { auth: u.auth }));
    expectOk(await t.call('PUT', '/api/resource/User/promoted@example.com', { json: { roles: [{ role: 'Clerk' }] } }));
    expectError(await t.call('GET', '/api/resource/User', { auth: u.auth }), 403, 'PermissionError');
  });

  it('refuses the key of a deleted user', async () => {
    const t = await server.tenant();
    const u = await createUser(server, t, 'gone@example.com', []);
    expect((await t.call('GET', WHO, { auth: u.auth })).status).toBe(200);
    const del = await t.call('DELETE', '/api/resource/User/gone@example.com');
    expect(del.status).toBe(202);
    expectError(await t.call('GET', WHO, { auth: u.auth }), 401, 'AuthenticationError');
  });
});

describe('the API key cache', () => {
  it('reads a key in use again before its entry expires, so none of its requests waits for the reload', async () => {
    const own = await startTestServer({ apiKeyTtlMs: 3000 });
    try {
      const t = await own.tenant();
      const u = await createUser(own, t, 'steady@example.com', []);
      expectError(await t.call('GET', '/api/resource/User', { auth: u.auth }), 403, 'PermissionError');
      // The notification of the key's issue may land after that request and drop its entry: let it, and cache the key again.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expectError(await t.call('GET', '/api/resource/User', { auth: u.auth }), 403, 'PermissionError');
      const misses = own.platform.apiKeys.stats.misses;
      // A change no notification announced (written straight to the table): only a re-read finds it.
      await own.db.query(
        `INSERT INTO ${qualified(t.schema, 'tabHas Role')} ("name", "parent", "parenttype", "parentfield", "role", "idx", "docstatus")
         VALUES ('steady-sm', $1, 'User', 'roles', 'System Manager', 1, 0)`,
        [u.email],
      );
      let status = 403;
      for (const until = Date.now() + 3000; status !== 200 && Date.now() < until;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await t.call('GET', '/api/resource/User', { auth: u.auth })).status;
      }
      expect(status).toBe(200);
      expect(own.platform.apiKeys.stats.misses, 'requests that had to read the key themselves').toBe(misses);
    } finally {
      await own.close();
    }
  });
});
