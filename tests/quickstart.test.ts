import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostFetch } from './support/host-fetch';
import { rawRequest, spawnQuire, type Spawned } from './support/process';

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
