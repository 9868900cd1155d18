import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostFetch } from '../support/host-fetch';
import { ROOT } from '../support/process';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { ensureDeskBuilt } from './support';

/** How the API serves the desk: its routes, redirects, caching, content types and refusals. */

let server: TestServer;
let tenant: TestTenant;
let origin: string;
let asset: string;

beforeAll(async () => {
  ensureDeskBuilt();
  server = await startTestServer();
  tenant = await server.tenant('serve');
  origin = `http://${tenant.name}.localhost:${server.port}`;
  asset = fs.readdirSync(path.join(ROOT, 'desk/dist')).find((f) => f.endsWith('.js'))!;
});

afterAll(async () => {
  await server.close();
});

const get = (p: string, headers: Record<string, string> = {}) => hostFetch(`${origin}${p}`, { headers });

let cookie: Promise<string> | undefined;
/** A signed-in user's cookies (the user is made once per file). */
function sessionCookie(): Promise<string> {
  return (cookie ??= signIn());
}

async function signIn(): Promise<string> {
  const res = await tenant.call('POST', '/api/resource/User', {
    json: { email: 'sam@example.com', first_name: 'Sam', new_password: 'correct horse battery staple', roles: [{ role: 'System Manager' }] },
  });
  expect(res.status, res.text).toBe(200);
  const login = await hostFetch(`${origin}/api/method/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ usr: 'sam@example.com', pwd: 'correct horse battery staple' }),
  });
  expect(login.status).toBe(200);
  return login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

describe('the desk, served by the API', () => {
  it('/ sends a Guest to /login and a signed-in user to /app; /login and /app redirect the other way', async () => {
    const guest = await get('/');
    expect(guest.status).toBe(302);
    expect(guest.headers.get('location')).toBe('/login');
    const deep = await get('/app/todo?x=1');
    expect(deep.status).toBe(302);
    expect(deep.headers.get('location')).toBe(`/login?redirect-to=${encodeURIComponent('/app/todo?x=1')}`);

    const cookie = await sessionCookie();
    const user = await get('/', { cookie });
    expect(user.status).toBe(302);
    expect(user.headers.get('location')).toBe('/app');
    const login = await get('/login', { cookie });
    expect(login.headers.get('location')).toBe('/app');
    const page = await get('/app/todo/new', { cookie });
    expect(page.status).toBe(200);
  });

  it('the page is HTML never cached, at /login, /app and any /app deep link', async () => {
    const cookie = await sessionCookie();
    for (const [p, headers] of [
      ['/login', {}],
      ['/app', { cookie }],
      ['/app/todo/some%20name', { cookie }],
    ] as const) {
      const res = await get(p, headers);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain(`/assets/desk/${asset}`);
    }
  });

  it('hashed assets are cached for a year, with their content type', async () => {
    const res = await get(`/assets/desk/${asset}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const css = fs.readdirSync(path.join(ROOT, 'desk/dist')).find((f) => f.endsWith('.css'))!;
    const style = await get(`/assets/desk/${css}`);
    expect(style.headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('/favicon.ico is the desk’s icon on every tenant’s host, cached for a day; the page links the same icon', async () => {
    const icon = await get('/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(icon.headers.get('cache-control')).toBe('public, max-age=86400');
    const svg = await icon.text();
    expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const other = await server.tenant('icon');
    const elsewhere = await hostFetch(`http://${other.name}.localhost:${server.port}/favicon.ico`);
    expect([elsewhere.status, await elsewhere.text()]).toEqual([200, svg]);

    const page = await get('/login');
    // The desk's policy lets the page show it (its own origin).
    expect(page.headers.get('content-security-policy')).toMatch(/img-src 'self'/);
    const href = /<link rel="icon"[^>]* href="([^"]+)"/.exec(await page.text())?.[1];
    expect(href).toMatch(/^\/assets\/desk\/favicon-[\w-]+\.svg$/);
    const linked = await get(href!);
    expect(linked.status).toBe(200);
    expect(linked.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(linked.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await linked.text()).toBe(svg);
  });

  it('a missing asset, the page under /assets and a path out of the folder are 404 in Frappe’s envelope', async () => {
    for (const p of [
      '/assets/desk/missing-abc123.js',
      '/assets/desk/index.html',
      '/assets/desk/..%2f..%2fpackage.json',
      '/assets/desk/%2e%2e/%2e%2e/package.json',
    ]) {
      const res = await get(p);
      expect(res.status, p).toBe(404);
      expect(res.headers.get('cache-control'), p).not.toContain('immutable');
      expect(await res.json(), p).toMatchObject({ exc_type: 'DoesNotExistError' });
    }
  });

  it('an unknown host answers as the API does; the legacy RPC on / still works', async () => {
    const unknown = await hostFetch(`http://nosuchtenant.localhost:${server.port}/login`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ exc_type: 'DoesNotExistError' });

    const rpc = await get('/?cmd=ping');
    expect(rpc.status).toBe(200);
    expect(await rpc.json()).toEqual({ message: 'pong' });
    const post = await hostFetch(`${origin}/`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'cmd=ping' });
    expect(await post.json()).toEqual({ message: 'pong' });
  });
});
