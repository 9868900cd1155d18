import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upload } from '../files/helpers';
import { createClient, redirectUri } from '../support/oauth-clients';
import { hostFetch } from '../support/host-fetch';
import { quireJson } from '../support/process';
import { call, type TestTenant } from '../support/server';
import { until } from '../support/until';
import { rawHttp } from './raw-http';
import { startTarget, type Target } from './target';

/**
 * What a stranger on the internet can send, sent to `quire serve` in production mode as raw bytes
 * where a client library would refuse (issue 25): bodies that stopped or hung the process, a reset
 * link bent by the Host header, reset emails without end, Socket.IO namespaces that grew memory,
 * pages that could be framed, files a dropped tenant left behind. After each: the process is up.
 */

let target: Target;

beforeAll(async () => {
  // A small MAX_FILE_SIZE, so a file over it is quick to send.
  target = await startTarget({ MAX_FILE_SIZE: String(64 * 1024) });
}, 120_000);
afterAll(async () => {
  await target.stop();
});

async function emails(t: TestTenant): Promise<string[]> {
  const { rows } = await target.db.query<{ message: string }>(`SELECT "message" FROM "${t.schema}"."tabEmail Queue" ORDER BY "creation"`);
  return rows.map((r) => r.message);
}

describe('a stranger cannot stop or hang a process with a multipart body', () => {
  let t: TestTenant;
  beforeAll(async () => {
    t = await target.tenant('mp');
  });

  const send = (body: string | Buffer, headers: Record<string, string> = {}) =>
    rawHttp(target.port, {
      method: 'POST',
      path: '/api/method/ping',
      host: `${t.name}.localhost`,
      headers: { 'Content-Type': 'multipart/form-data; boundary=XX', ...headers },
      body,
    });

  it('a file part cut off before its closing boundary is a 417, and the process and requests in flight go on', async () => {
    // A request in flight on the same process while the hostile one arrives.
    const inFlight = t.call('GET', '/api/resource/ToDo', { query: { limit: 500, fields: '["*"]' } });
    const cut = await send('--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc');
    expect(cut.status).toBe(417);
    expect(JSON.parse(cut.body)).toMatchObject({ exc_type: 'ValidationError' });
    expect(cut.body).not.toMatch(/busboy|Unexpected end|node_modules|\n\s+at /);
    expect((await inFlight).status).toBe(200);
    expect(target.alive()).toBe(true);
    expect((await t.call('GET', '/api/method/ping')).body).toEqual({ message: 'pong' });
  });

  it('a NUL byte in a part header is answered at once, not left hanging', async () => {
    const nul = await send('--XX\r\nContent-Disposition: form-data; name="fi\0le"; filename="a.txt"\r\n\r\nabc\r\n--XX--\r\n');
    expect(nul.timedOut).toBe(false);
    expect(nul.status).toBe(417);
    expect(nul.ms).toBeLessThan(2000);
  });

  it('malformed multipart bodies of every kind get a 4xx in Frappe’s envelope, never a hang or a 5xx', async () => {
    const bodies: Array<string | Buffer> = [
      '',
      '--XX--\r\n',
      '--XX\r\n\r\n',
      '--XX\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--XX--\r\n', // no name
      '--XX\r\nNo-Colon-Here\r\n\r\nx\r\n--XX--\r\n',
      `--XX\r\n${'X-Long: y\r\n'.repeat(500)}\r\nx\r\n--XX--\r\n`,
      Buffer.concat([Buffer.from('--XX\r\nContent-Disposition: form-data; name="f"; filename="b.bin"\r\n\r\n'), Buffer.alloc(4096, 0xff)]),
      `${'--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n'.repeat(1100)}--XX--\r\n`,
    ];
    for (const body of bodies) {
      const res = await send(body);
      expect(res.timedOut, JSON.stringify(body.slice(0, 60))).toBe(false);
      expect(res.status === 200 || (res.status >= 400 && res.status < 500), `${res.status} for ${JSON.stringify(body.slice(0, 60))}`).toBe(true);
    }
    // Content types the parser itself refuses: no boundary, an empty one.
    for (const type of ['multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="unterminated']) {
      const res = await send('--XX--\r\n', { 'Content-Type': type });
      expect(res.status, type).toBeGreaterThanOrEqual(400);
      expect(res.status, type).toBeLessThan(500);
    }
    expect(target.alive()).toBe(true);
  });

  it('a file over MAX_FILE_SIZE is a 413 however its parts continue, and the process goes on', async () => {
    for (const tail of ['\r\n--XX--\r\n', '', '\r\n--XX\r\nContent-Disposition: form-data; name="more"\r\n\r\nx\r\n--XX--\r\n']) {
      const res = await send(
        Buffer.concat([
          Buffer.from('--XX\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n'),
          Buffer.alloc(200 * 1024, 0x61),
          Buffer.from(tail),
        ]),
        { Authorization: t.auth },
      );
      expect(res.status, JSON.stringify(tail)).toBe(413);
    }
    expect(target.alive()).toBe(true);
    expect((await t.call('GET', '/api/method/ping')).status).toBe(200);
  });

  it('a multipart body declared larger than one file and the body limit together is refused 413 before it is read', async () => {
    // MAX_FILE_SIZE (64 KiB here) + MAX_BODY_SIZE (25 MiB by default): 60 MiB is refused from its Content-Length.
    const res = await rawHttp(target.port, {
      method: 'POST',
      path: '/api/method/upload_file',
      host: `${t.name}.localhost`,
      headers: { 'Content-Type': 'multipart/form-data; boundary=XX', Authorization: t.auth },
      body: '--XX\r\n',
      contentLength: 60 * 1024 * 1024,
    });
    expect(res.status).toBe(413);
    expect(res.ms).toBeLessThan(2000);
    expect(target.alive()).toBe(true);
  });
});

describe('a password reset link always points at the tenant’s own host', () => {
  const reset = (host: string, headers: Record<string, string> = {}, user = 'reset@example.com') =>
    rawHttp(target.port, {
      method: 'POST',
      path: '/api/method/frappe.core.doctype.user.user.reset_password',
      host,
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ user }),
    });

  async function withUser(prefix: string): Promise<TestTenant> {
    const t = await target.tenant(prefix);
    const made = await t.call('POST', '/api/resource/User', { json: { email: 'reset@example.com', first_name: 'Reset' } });
    expect(made.status, made.text).toBe(200);
    return t;
  }

  it('a Host with userinfo (`<tenant>.localhost:80@evil.example`) reaches no tenant: 404, and no email is queued', async () => {
    const t = await withUser('rh');
    const hosts = [
      `${t.name}.localhost:80@evil.example`,
      `${t.name}.localhost/evil`,
      `${t.name}.localhost evil`,
      `${t.name}.localhost:x`,
      `${t.name}.localhost:99999`,
    ];
    for (const host of hosts) {
      const res = await reset(host);
      expect([400, 404], host).toContain(res.status);
      // Nor does it reach the tenant's OAuth issuer, whose URLs are built from the Host (found by the fuzz run: a 500).
      const discovery = await rawHttp(target.port, { path: '/.well-known/openid-configuration', host });
      expect([400, 404], host).toContain(discovery.status);
    }
    expect(await emails(t)).toEqual([]);
  });

  it('the link is built from the tenant’s primary host and the public scheme, whatever Host, X-Forwarded-Host or -Proto say', async () => {
    const t = await withUser('rl');
    const res = await reset('evil.example', {
      'X-Frappe-Site-Name': t.name,
      'X-Forwarded-Host': 'evil.example',
      'X-Forwarded-Proto': 'http',
      'X-Forwarded-For': '203.0.113.9',
    });
    expect(res.status, res.body).toBe(200);
    const [message] = await emails(t);
    // Production's public scheme is https and its port the scheme's own (PUBLIC_URL_SCHEME, PUBLIC_URL_PORT).
    expect(message).toMatch(new RegExp(`open https://${t.name}\\.localhost/update-password\\?key=[0-9a-f]{64}\\n`));
    expect(message).not.toContain('evil');
  });

  it('with a host_name set (`quire tenant set --host-name`), links point there, and the key in the link sets a new password once', async () => {
    const t = await withUser('rn');
    const set = await quireJson(['tenant', 'set', t.name, '--host-name', 'https://ERP.acme.test/'], target.env);
    expect(set.code).toBe(0);
    expect(set.json.config).toMatchObject({ host_name: 'https://erp.acme.test' });
    const refused = await quireJson(['tenant', 'set', t.name, '--host-name', 'https://erp.acme.test@evil.example/x'], target.env);
    expect(refused.code).not.toBe(0);

    // The server hears of the setting through NOTIFY: a reset sent before that used the primary host.
    let message = '';
    for (let attempt = 0; attempt < 3 && !message.includes('https://erp.acme.test/'); attempt++) {
      await new Promise((r) => setTimeout(r, 300 * (attempt + 1)));
      expect((await reset(`${t.name}.localhost`, { 'X-Forwarded-Host': 'evil.example' })).status).toBe(200);
      message = (await emails(t)).at(-1) ?? '';
    }
    expect(message).toMatch(/open https:\/\/erp\.acme\.test\/update-password\?key=[0-9a-f]{64}\n/);
    const key = /\?key=([0-9a-f]{64})/.exec(message)?.[1] ?? '';
    expect(key).not.toBe('');
    const update = (k: string) =>
      call(target.url, t.name, 'POST', '/api/method/frappe.core.doctype.user.user.update_password', {
        auth: null,
        json: { key: k, new_password: 'a new password 9!' },
      });
    expect((await update(key)).body).toEqual({ message: '/app' });
    expect((await update(key)).status).toBe(410);
    const login = await call(target.url, t.name, 'POST', '/api/method/login', { auth: null, json: { usr: 'reset@example.com', pwd: 'a new password 9!' } });
    expect(login.status, login.text).toBe(200);
  });
});

describe('reset emails are limited per user and per client address', () => {
  const reset = (t: TestTenant, user: string, headers: Record<string, string> = {}) =>
    call(target.url, t.name, 'POST', '/api/method/frappe.core.doctype.user.user.reset_password', { auth: null, json: { user }, headers });

  it('three an hour for one user (Frappe’s password_reset_limit); the fourth is a 429 with Retry-After and queues nothing', async () => {
    const t = await target.tenant('rr');
    expect((await t.call('POST', '/api/resource/User', { json: { email: 'victim@example.com', first_name: 'V' } })).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await reset(t, i === 1 ? ' VICTIM@example.com' : 'victim@example.com')).status);
    expect(statuses).toEqual([200, 200, 200]);
    const fourth = await reset(t, 'victim@example.com');
    expect(fourth.status).toBe(429);
    expect(fourth.body).toMatchObject({ exc_type: 'RateLimitExceededError' });
    const retryAfter = Number(fourth.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await emails(t)).toHaveLength(3);
  });

  it('ten an hour from one client address, whichever users it names; X-Forwarded-For does not change the address without TRUST_PROXY', async () => {
    const t = await target.tenant('ri');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await reset(t, `nobody${i}@example.com`, { 'X-Forwarded-For': `198.51.100.${i}` })).status);
    // Unknown users are Frappe's 404 `not found`; they count all the same.
    expect(statuses).toEqual([...Array<number>(10).fill(404), 429, 429]);
    expect(target.alive()).toBe(true);
  });
});

/** An Engine.IO v4 polling session, spoken by hand: what a hostile client does without socket.io-client. */
async function pollingSession(headers: Record<string, string> = {}): Promise<{ send(packets: string[]): Promise<number>; read(): Promise<string> }> {
  const base = `${target.url}/socket.io/?EIO=4&transport=polling`;
  const open = await (await fetch(base, { headers })).text();
  const sid = (JSON.parse(open.slice(1)) as { sid: string }).sid;
  return {
    async send(packets) {
      const res = await fetch(`${base}&sid=${sid}`, { method: 'POST', body: packets.join('\x1e'), headers: { ...headers, 'Content-Type': 'text/plain' } });
      await res.text();
      return res.status;
    },
    async read() {
      return (await fetch(`${base}&sid=${sid}`, { headers })).text();
    },
  };
}

describe('Socket.IO keeps nothing for namespaces no tenant owns', () => {
  it('a Guest asking for thousands of made-up namespaces is refused each time and the process keeps none of them', async () => {
    const session = await pollingSession();
    let refused = 0;
    const ask = async (batches: number, round: string) => {
      for (let batch = 0; batch < batches; batch++) {
        const names = Array.from({ length: 1000 }, (_, i) => `/made-up-${round}-${batch}-${i}`);
        expect(await session.send(names.map((n) => `40${n},`))).toBe(200);
        refused += (await session.read()).split('\x1e').filter((p) => p.includes('Invalid namespace')).length;
      }
    };
    // A first round settles what any such traffic allocates once (buffers, code, the heap's growth).
    await ask(10, 'warm');
    const before = target.rssKiB();
    await ask(40, 'measured');
    expect(refused).toBe(50_000);
    expect(await target.metric('quire_realtime_namespaces')).toBe(0);
    // Kept, 40,000 namespaces grow the process by about 77 MiB (issue 25: 110 MiB for 60,000). Not kept, the
    // resident size still moves with the allocator (up to 26 MiB seen on Node 24 under the whole suite), so the
    // bound sits between the two; the namespace count above is the exact check.
    expect(target.rssKiB() - before).toBeLessThan(48 * 1024);
    expect(target.alive()).toBe(true);
  });

  it('an existing tenant’s namespace a refused handshake made is dropped once nobody is in it', async () => {
    const t = await target.tenant('ns');
    const session = await pollingSession({ 'X-Frappe-Site-Name': t.name });
    await session.send([`40/${t.name},`]);
    expect(await session.read()).toContain('Not authenticated');
    expect(await target.metric('quire_realtime_namespaces')).toBe(1);
    await until(
      () => target.metric('quire_realtime_namespaces'),
      (n) => n === 0,
      15_000,
    );
  });
});

describe('every HTML page refuses to be framed and carries a Content-Security-Policy', () => {
  function expectPageHeaders(headers: Headers, what: string): void {
    const csp = headers.get('content-security-policy') ?? '';
    expect(csp, what).toContain("frame-ancestors 'none'");
    expect(csp, what).toContain("object-src 'none'");
    expect(csp, what).toContain("base-uri 'none'");
    expect(csp, what).toMatch(/default-src '(self|none)'/);
    expect(csp, what).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(headers.get('x-frame-options'), what).toBe('DENY');
    expect(headers.get('x-content-type-options'), what).toBe('nosniff');
    expect(headers.get('referrer-policy'), what).toBe('same-origin');
  }

  it('the desk (/login, /app/…) and the API reference', async () => {
    const t = await target.tenant('hp');
    const origin = `http://${t.name}.localhost:${target.port}`;
    for (const p of ['/login', '/api/docs']) {
      const res = await hostFetch(`${origin}${p}`);
      expect(res.status, p).toBe(200);
      expectPageHeaders(res.headers, p);
    }
    const app = await hostFetch(`${origin}/app/todo`, { headers: { Authorization: t.auth } });
    expect(app.status).toBe(200);
    expectPageHeaders(app.headers, '/app/todo');
    // JSON answers are never sniffed into anything else.
    expect((await t.call('GET', '/api/resource/ToDo')).headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('the OAuth sign-in and consent page (/oauth/interaction/<uid>) and the OAuth error page', async () => {
    const t = await target.tenant('ho');
    const app = await createClient(t);
    const origin = `http://${t.name}.localhost:${target.port}`;
    const authorize = new URL(`${origin}/oauth/auth`);
    for (const [k, v] of Object.entries({
      client_id: app.client_id,
      response_type: 'code',
      scope: 'openid all',
      redirect_uri: await redirectUri(),
      state: 's1',
    }))
      authorize.searchParams.set(k, v);
    const start = await hostFetch(authorize, { redirect: 'manual' });
    expect(start.status).toBe(303);
    const interaction = new URL(start.headers.get('location') ?? '', origin);
    expect(interaction.pathname).toMatch(/^\/oauth\/interaction\//);
    const cookies = start.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const page = await hostFetch(interaction, { headers: { Cookie: cookies } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Sign in');
    expectPageHeaders(page.headers, 'interaction');

    const error = await hostFetch(`${origin}/oauth/auth?client_id=nobody&response_type=code&scope=openid`);
    expect(error.status).toBe(400);
    expect(error.headers.get('content-type')).toContain('text/html');
    expectPageHeaders(error.headers, 'error page');
  });
});

describe('dropping a tenant removes its uploaded files', () => {
  it('`quire tenant drop` has the tenant’s public and private files removed from the store, wherever the command runs', async () => {
    const t = await target.tenant('fd');
    expect((await upload(target.url, t, 'public bytes', 'public.txt')).status).toBe(200);
    expect((await upload(target.url, t, 'private bytes', 'private.txt', { fields: { is_private: '1' } })).status).toBe(200);
    const folder = path.join(target.filesDir, t.schema);
    expect(fs.existsSync(path.join(folder, 'public/files/public.txt'))).toBe(true);
    expect(fs.existsSync(path.join(folder, 'private/files/private.txt'))).toBe(true);

    // The command holds no file store (it runs beside the API, as a Job or the operator would): it
    // records the purge with the drop, and the API process, which holds the files, removes them.
    const dropped = await quireJson(['tenant', 'drop', t.name, '--yes'], target.env);
    expect(dropped.code).toBe(0);
    expect(
      await until(
        () => Promise.resolve(fs.existsSync(folder)),
        (exists) => !exists,
        10_000,
      ),
    ).toBe(false);
    const { rows } = await target.db.query(`SELECT 1 FROM quire.tenant_file_purges WHERE "schema" = $1`, [t.schema]);
    expect(rows).toEqual([]);

    // A tenant of the same name starts with no files.
    const again = await quireJson(['tenant', 'create', t.name], target.env);
    expect(again.code).toBe(0);
    expect(fs.existsSync(folder)).toBe(false);
    expect(target.alive()).toBe(true);
  });
});
