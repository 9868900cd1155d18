import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenantConfig } from '@quire/tenancy';
import { call, startTestServer, type CallResult, type TestServer, type TestTenant } from '../support/server';

/**
 * Cookie sessions (frappe-wire.md §7.4–7.5, §12 CORS): login and its cookies, durable sessions,
 * logout, expiry, throttling of failed logins, CSRF for sessions given a token, CORS allow-lists.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const PASSWORD = 'correct horse battery staple';

async function withUser(t: TestTenant, email: string, userType = 'System User'): Promise<void> {
  const res = await t.call('POST', '/api/resource/User', {
    json: { email, first_name: 'Grace', last_name: 'Hopper', user_type: userType, new_password: PASSWORD, roles: [{ role: 'System Manager' }] },
  });
  expect(res.status, res.text).toBe(200);
}

function cookies(res: CallResult): Map<string, string> {
  const jar = new Map<string, string>();
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return jar;
}

async function login(t: TestTenant, usr: string, pwd = PASSWORD, headers: Record<string, string> = {}): Promise<CallResult> {
  return call(server.url, t.name, 'POST', '/api/method/login', { json: { usr, pwd }, headers });
}

const asSession =
  (t: TestTenant, sid: string) =>
  (method: string, path: string, o: Parameters<TestTenant['call']>[2] = {}) =>
    call(server.url, t.name, method, path, { ...o, headers: { Cookie: `sid=${sid}`, ...(o.headers ?? {}) } });

describe('login', () => {
  it('answers Frappe’s body and sets its cookies', async () => {
    const t = await server.tenant('login');
    await withUser(t, 'grace@example.com');
    const res = await login(t, 'grace@example.com');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Logged In', home_page: '/app', full_name: 'Grace Hopper' });
    const set = res.headers.getSetCookie();
    const sid = set.find((c) => c.startsWith('sid='))!;
    expect(sid).toMatch(/^sid=[0-9a-f]{56}; Max-Age=\d+; Path=\/; Expires=.*; HttpOnly; SameSite=Lax$/);
    expect(set.find((c) => c.startsWith('user_id='))).toMatch(/^user_id=grace%40example.com; Path=\/; SameSite=Lax$/);
    expect(cookies(res).get('system_user')).toBe('yes');
    expect(cookies(res).get('full_name')).toBe('Grace%20Hopper');
    expect(cookies(res).has('user_image')).toBe(true);
  });

  it('a Website User gets "No App"', async () => {
    const t = await server.tenant('login');
    await withUser(t, 'web@example.com', 'Website User');
    expect((await login(t, 'web@example.com')).body.message).toBe('No App');
  });

  it('refuses a wrong password or unknown user with 401 and Frappe’s message', async () => {
    const t = await server.tenant('login');
    await withUser(t, 'grace@example.com');
    for (const res of [await login(t, 'grace@example.com', 'nope'), await login(t, 'nobody@example.com')]) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ exc_type: 'AuthenticationError', message: 'Invalid login credentials' });
      expect(cookies(res).get('sid')).toBe('');
    }
    expect((await login(t, '', '')).body.message).toBe('Incomplete login details');
  });

  it('the session works for API calls, is stored durably, and survives a restart of the API process', async () => {
    const t = await server.tenant('login');
    await withUser(t, 'grace@example.com');
    const sid = cookies(await login(t, 'grace@example.com')).get('sid')!;
    expect((await asSession(t, sid)('GET', '/api/method/frappe.auth.get_logged_user')).body).toEqual({ message: 'grace@example.com' });
    const { rows } = await server.db.query<{ user: string }>(`SELECT "user" FROM "${t.schema}"."__Sessions"`);
    expect(rows).toEqual([{ user: 'grace@example.com' }]);
    const other = await startTestServer();
    try {
      const res = await call(other.url, t.name, 'GET', '/api/method/frappe.auth.get_logged_user', { headers: { Cookie: `sid=${sid}` } });
      expect(res.body).toEqual({ message: 'grace@example.com' });
    } finally {
      await other.close();
    }
  });

  it('accepts the session id as a sid parameter too', async () => {
    const t = await server.tenant('login');
    await withUser(t, 'grace@example.com');
    const sid = cookies(await login(t, 'grace@example.com')).get('sid')!;
    const res = await call(server.url, t.name, 'GET', '/api/method/frappe.auth.get_logged_user', { query: { sid } });
    expect(res.body).toEqual({ message: 'grace@example.com' });
  });

  it('logout ends the session everywhere and expires the cookies', async () => {
    const t = await server.tenant('login');
    await withUser(t, 'grace@example.com');
    const sid = cookies(await login(t, 'grace@example.com')).get('sid')!;
    const session = asSession(t, sid);
    expect((await session('GET', '/api/method/frappe.auth.get_logged_user')).status).toBe(200);
    const out = await session('POST', '/api/method/logout', { json: {} });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().find((c) => c.startsWith('sid='))).toMatch(/Expires=Thu, 01 Jan 1970/);
    const after = await session('GET', '/api/method/frappe.auth.get_logged_user');
    expect(after.status).toBe(403);
    expect(after.body.session_expired).toBe(1);
  });

  it('an unknown session continues as Guest with session_expired', async () => {
    const t = await server.tenant('login');
    const res = await asSession(t, 'f'.repeat(56))('GET', '/api/method/ping');
    expect(res.body).toEqual({ message: 'pong', session_expired: 1 });
  });

  it('a session expires after the configured idle time', async () => {
    const short = await startTestServer({ sessionExpirySeconds: 60 });
    try {
      const t = await short.tenant('expiry');
      await t.call('POST', '/api/resource/User', { json: { email: 'g@example.com', first_name: 'G', new_password: PASSWORD } });
      const res = await call(short.url, t.name, 'POST', '/api/method/login', { json: { usr: 'g@example.com', pwd: PASSWORD } });
      const sid = cookies(res).get('sid')!;
      expect(res.headers.getSetCookie().find((c) => c.startsWith('sid='))).toContain('Max-Age=60');
      await short.db.query(`UPDATE "${t.schema}"."__Sessions" SET "expires_at" = "expires_at" - interval '61 seconds'`);
      short.platform.sessions.clear();
      const after = await call(short.url, t.name, 'GET', '/api/method/frappe.auth.get_logged_user', { headers: { Cookie: `sid=${sid}` } });
      expect(after.status).toBe(403);
    } finally {
      await short.close();
    }
  });

  it('disabling a user ends their sessions at once', async () => {
    const t = await server.tenant('login');
    await withUser(t, 'grace@example.com');
    const sid = cookies(await login(t, 'grace@example.com')).get('sid')!;
    await t.call('PUT', '/api/resource/User/grace@example.com', { json: { enabled: 0 } });
    expect((await asSession(t, sid)('GET', '/api/method/frappe.auth.get_logged_user')).status).toBe(403);
  });
});

describe('throttling failed logins', () => {
  it('locks a user out with 429 after repeated failures, even with the right password', async () => {
    const t = await server.tenant('throttle');
    await withUser(t, 'grace@example.com');
    for (let i = 0; i < 10; i++) {
      const res = await login(t, 'grace@example.com', 'wrong', { 'X-Forwarded-For': `10.0.0.${i}` });
      expect(res.status).toBe(401);
    }
    const locked = await login(t, 'grace@example.com');
    expect(locked.status).toBe(429);
    expect(locked.body.exc_type).toBe('TooManyRequestsError');
    expect(locked.body.message).toMatch(/locked and will resume after \d+ seconds/);
  });

  it('a success before the limit resets the count', async () => {
    const t = await server.tenant('throttle');
    await withUser(t, 'grace@example.com');
    for (let i = 0; i < 9; i++) await login(t, 'grace@example.com', 'wrong');
    expect((await login(t, 'grace@example.com')).status).toBe(200);
    for (let i = 0; i < 9; i++) await login(t, 'grace@example.com', 'wrong');
    expect((await login(t, 'grace@example.com')).status).toBe(200);
  });

  it('locks out an address that keeps guessing different users', async () => {
    const t = await server.tenant('throttle');
    await withUser(t, 'grace@example.com');
    for (let i = 0; i < 10; i++) expect((await login(t, `user${i}@example.com`, 'wrong')).status).toBe(401);
    expect((await login(t, 'grace@example.com')).status).toBe(429);
  });
});

describe('CSRF', () => {
  it('a session given a token must send it on unsafe verbs; reads need nothing', async () => {
    const t = await server.tenant('csrf');
    await withUser(t, 'grace@example.com');
    const sid = cookies(await login(t, 'grace@example.com')).get('sid')!;
    const session = asSession(t, sid);
    // Before a token is issued, API-only sessions work without one (as in Frappe).
    expect((await session('POST', '/api/resource/ToDo', { json: { description: 'before token' } })).status).toBe(200);
    const token = (await session('GET', '/api/method/frappe.sessions.get_csrf_token')).body.message as string;
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    const refused = await session('POST', '/api/resource/ToDo', { json: { description: 'no token' } });
    expect(refused.status).toBe(400);
    expect(refused.body.exc_type).toBe('CSRFTokenError');
    expect(refused.body.exception).not.toContain('    at ');
    expect((await session('POST', '/api/resource/ToDo', { json: { description: 'wrong' }, headers: { 'X-Frappe-CSRF-Token': 'x' } })).status).toBe(400);
    expect((await session('POST', '/api/resource/ToDo', { json: { description: 'with token' }, headers: { 'X-Frappe-CSRF-Token': token } })).status).toBe(200);
    expect((await session('POST', '/api/resource/ToDo', { form: { data: '{"description":"form field"}', csrf_token: token } })).status).toBe(200);
    expect((await session('GET', '/api/resource/ToDo')).status).toBe(200);
  });

  it('token and Basic authentication never need a CSRF token', async () => {
    const t = await server.tenant('csrf');
    expect((await t.call('POST', '/api/resource/ToDo', { json: { description: 'token auth' } })).status).toBe(200);
    const basic = `Basic ${Buffer.from(`${t.api_key}:${t.api_secret}`).toString('base64')}`;
    expect((await t.call('POST', '/api/resource/ToDo', { json: { description: 'basic auth' }, auth: basic })).status).toBe(200);
  });
});

describe('CORS', () => {
  it('echoes an allowed origin with credentials, answers preflight, ignores other origins', async () => {
    const t = await server.tenant('cors');
    const origin = 'https://app.example.test';
    const before = await t.call('GET', '/api/method/ping', { headers: { Origin: origin } });
    expect(before.headers.get('access-control-allow-origin')).toBeNull();
    await updateTenantConfig(server.platform, t.name, { allow_cors: [origin] });
    const res = await t.call('GET', '/api/method/ping', { headers: { Origin: origin } });
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('vary')).toContain('Origin');
    const preflight = await call(server.url, t.name, 'OPTIONS', '/api/resource/ToDo', {
      headers: { Origin: origin, 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'authorization,content-type,x-frappe-csrf-token' },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('PUT');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization,content-type,x-frappe-csrf-token');
    expect(preflight.headers.get('access-control-max-age')).toBe('86400');
    const other = await t.call('GET', '/api/method/ping', { headers: { Origin: 'https://evil.example.test' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('"*" allows any origin, echoed (never a literal * with credentials)', async () => {
    const t = await server.tenant('cors');
    await updateTenantConfig(server.platform, t.name, { allow_cors: '*' });
    const res = await t.call('GET', '/api/method/ping', { headers: { Origin: 'http://localhost:5173' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });
});
