import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { hostFetch } from './support/host-fetch';
import { quireJson, rawRequest, spawnQuire, type Spawned } from './support/process';
import { databaseUrl } from './support/server';

/**
 * The README's quick start, as a new user runs it: `npm start` with no database server serves the
 * API on the embedded database, creates a `demo` tenant and prints a curl line that works as printed.
 */

const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-quickstart-'));
const env = { QUIRE_DATA_DIR: path.join(dataRoot, 'data'), PORT: '0' };
const running: Spawned[] = [];

afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  fs.rmSync(dataRoot, { recursive: true, force: true });
});

function curlLine(out: string): { auth: string; host: string; port: number; path: string } {
  const m = /curl -H "(Authorization: token [0-9a-f]+:[0-9a-f]+)" http:\/\/([a-z0-9.-]+):(\d+)(\/api\/resource\/ToDo)/.exec(out);
  if (!m) throw new Error(`no curl line in: ${out}`);
  return { auth: m[1]!.slice('Authorization: '.length), host: m[2]!, port: Number(m[3]), path: m[4]! };
}

describe('npm start on the embedded database', () => {
  it('prints a curl line that works as printed, on first start and after a restart', async () => {
    const first = spawnQuire(['serve'], env);
    running.push(first);
    await first.waitFor(/curl -H/, 60_000);
    const line = curlLine(first.stdout());
    expect(line.host).toBe('demo.localhost');
    const created = await rawRequest({
      port: line.port,
      host: `${line.host}:${line.port}`,
      path: line.path,
      method: 'POST',
      headers: { Authorization: line.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ description: 'kept across restarts' }),
    });
    expect(created.status).toBe(200);
    // The desk is served with no step beyond npm install (its prepare script builds it).
    expect(first.stdout()).toContain(`the desk: http://demo.localhost:${line.port}/login`);
    const desk = await rawRequest({ port: line.port, host: `${line.host}:${line.port}`, path: '/login' });
    expect(desk.status).toBe(200);
    expect(desk.body).toContain('<div id="root">');

    // A second process on the same data folder is refused with a clear message.
    const second = spawnQuire(['serve'], env);
    expect(await second.stop('SIGCONT')).not.toBe(0);

    expect(await first.stop()).toBe(0);
    const again = spawnQuire(['serve'], env);
    running.push(again);
    await again.waitFor(/curl -H/, 60_000);
    const relined = curlLine(again.stdout());
    expect(relined.auth).toBe(line.auth);
    const list = await rawRequest({
      port: relined.port,
      host: `${relined.host}:${relined.port}`,
      path: `${relined.path}?fields=%5B%22description%22%5D`,
      headers: { Authorization: relined.auth },
    });
    expect(list).toEqual({ status: 200, body: { data: [{ description: 'kept across restarts' }] } });

    // The README's OAuth example: the same process is the tenant's issuer (client credentials).
    const site = `http://${relined.host}:${relined.port}`;
    const registered = await hostFetch(`${site}/api/resource/OAuth%20Client`, {
      method: 'POST',
      headers: { Authorization: relined.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ app_name: 'Nightly sync', grant_type: 'Client Credentials', user: 'Administrator', scopes: 'todo:read todo:write' }),
    });
    const app = ((await registered.json()) as { data: { client_id: string; client_secret: string } }).data;
    const issued = await hostFetch(`${site}/oauth/token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    const { access_token } = (await issued.json()) as { access_token: string };
    const withToken = (path: string) => hostFetch(`${site}${path}`, { headers: { Authorization: `Bearer ${access_token}` } });
    expect((await withToken('/api/resource/ToDo')).status).toBe(200);
    expect((await withToken('/api/resource/User')).status).toBe(403);
  }, 120_000);
});

describe('a first start, as a stranger makes it', () => {
  const folder = (name: string) => ({ QUIRE_DATA_DIR: path.join(dataRoot, name, 'data'), PORT: '0' });

  it('localhost and 127.0.0.1 land on the demo; errors carry no stack trace unless `--dev`; Ctrl-C stops at once', async () => {
    // SHUTDOWN_DELAY_MS as a user has it: unset.
    const p = spawnQuire(['serve'], { ...folder('hosts'), SHUTDOWN_DELAY_MS: undefined });
    running.push(p);
    await p.waitFor(/curl -H/, 60_000);
    const { port } = curlLine(p.stdout());
    expect(p.stdout()).toContain('Any other host name is served as demo (DEFAULT_TENANT)');
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const login = await rawRequest({ port, host, path: '/login' });
      expect(login.status, host).toBe(200);
      expect(String(login.body)).toContain('<div id="root">');
      const missing = await rawRequest({ port, host, path: '/api/method/no.such.method' });
      expect(missing.status, host).toBe(417);
      expect(JSON.stringify(missing.body), host).not.toMatch(/node_modules|\\n\s+at |\.ts:\d/);
    }
    const started = Date.now();
    expect(await p.stop('SIGINT')).toBe(0);
    expect(Date.now() - started).toBeLessThan(3000);

    const dev = spawnQuire(['serve', '--dev'], folder('hosts'));
    running.push(dev);
    await dev.waitFor(/curl -H/, 60_000);
    const devPort = curlLine(dev.stdout()).port;
    const traced = await rawRequest({ port: devPort, host: `localhost:${devPort}`, path: '/api/method/no.such.method' });
    expect(traced.status).toBe(417);
    expect((JSON.parse((traced.body as { exc: string }).exc) as string[])[0]).toMatch(/\n\s+at /);
    expect(await dev.stop()).toBe(0);
  }, 120_000);

  it('a taken operations port does not stop `npm start`: it takes a free one; a service given METRICS_PORT still fails loudly', async () => {
    // Hold the default port (9464) as another Quire would; already held by something else is as good.
    const holder = net.createServer();
    await new Promise<void>((resolve) => {
      holder.once('error', () => resolve());
      holder.listen(9464, () => resolve());
    });
    try {
      const p = spawnQuire(['serve'], { ...folder('ports'), METRICS_PORT: undefined });
      running.push(p);
      const [, opsPort] = await p.waitFor(/health on port (\d+)/, 60_000);
      expect(Number(opsPort)).not.toBe(9464);
      expect(await p.stop()).toBe(0);

      const strict = spawnQuire(['serve'], { ...folder('ports'), METRICS_PORT: '9464' });
      expect(await strict.stop('SIGCONT')).not.toBe(0);
    } finally {
      holder.close();
    }
  }, 120_000);

  it('keys generated for the demo Administrator in the desk: the next start says so, and `quire keys generate` puts working ones in the file', async () => {
    const env = folder('keys');
    const first = spawnQuire(['serve'], env);
    running.push(first);
    await first.waitFor(/curl -H/, 60_000);
    const line = curlLine(first.stdout());
    // What the desk's Generate Keys does.
    const generated = await rawRequest({
      port: line.port,
      host: `${line.host}:${line.port}`,
      path: '/api/method/frappe.core.doctype.user.user.generate_keys',
      method: 'POST',
      headers: { Authorization: line.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ user: 'Administrator' }),
    });
    expect(generated.status).toBe(200);
    expect(await first.stop()).toBe(0);

    const stale = spawnQuire(['serve'], env);
    running.push(stale);
    await stale.waitFor(/the desk:/, 60_000);
    expect(stale.stdout()).toMatch(/no longer works: new keys were generated in the desk/);
    expect(stale.stdout()).not.toMatch(/curl -H/);
    expect(await stale.stop()).toBe(0);

    const keys = await quireJson(['keys', 'generate', '--tenant', 'demo', '--user', 'Administrator'], env);
    expect(keys.code).toBe(0);
    const file = JSON.parse(fs.readFileSync(path.join(dataRoot, 'keys', 'demo-credentials.json'), 'utf8')) as { api_key: string; api_secret: string };
    expect(file).toMatchObject({ api_key: keys.json.api_key, api_secret: keys.json.api_secret });

    const again = spawnQuire(['serve'], env);
    running.push(again);
    await again.waitFor(/curl -H/, 60_000);
    const fresh = curlLine(again.stdout());
    const list = await rawRequest({ port: fresh.port, host: `${fresh.host}:${fresh.port}`, path: fresh.path, headers: { Authorization: fresh.auth } });
    expect(list.status).toBe(200);
    expect(await again.stop()).toBe(0);
  }, 180_000);
});

describe('Running on Postgres, as the README says', () => {
  it('`quire migrate` makes the database DATABASE_URL names when it does not exist', async () => {
    const url = new URL(databaseUrl());
    const name = `quire_readme_${randomBytes(4).toString('hex')}`;
    url.pathname = `/${name}`;
    const admin = new URL(databaseUrl());
    admin.pathname = '/postgres';
    try {
      const migrated = await quireJson(['migrate'], { DATABASE_URL: url.toString() });
      expect(migrated.code).toBe(0);
      const created = await quireJson(['tenant', 'create', 'acme'], { DATABASE_URL: url.toString() });
      expect(created.json).toMatchObject({ name: 'acme', hosts: ['acme.localhost'] });
    } finally {
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    }
  }, 120_000);
});
