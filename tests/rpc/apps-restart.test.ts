import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { quireJson, ROOT, spawnQuire, type Spawned } from '../support/process';
import { call } from '../support/server';

/**
 * Methods are code, found by path: a whitelisted function added to a configured app is callable
 * at its dotted path after a restart, with no other change; the same function unmarked is a 403.
 * In a database of its own: `quire serve` migrates every tenant to its apps' release.
 */

const work = path.join(ROOT, 'tests/.tmp', randomBytes(4).toString('hex'));
const app = path.join(work, 'lab_app');
const running: Spawned[] = [];
let fresh: FreshDatabase | undefined;

afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  await fresh?.drop();
  fs.rmSync(work, { recursive: true, force: true });
});

async function serve(env: NodeJS.ProcessEnv): Promise<number> {
  const p = spawnQuire(['serve'], env);
  running.push(p);
  const m = await p.waitFor(/listening on port (\d+)/, 60_000);
  return Number(m[1]);
}

describe('apps are configured, methods are found by their path', () => {
  it('a function added to an app and marked whitelisted is callable after a restart; unmarked it is refused', async () => {
    fs.mkdirSync(work, { recursive: true });
    fs.cpSync(path.join(ROOT, 'tests/fixtures/apps/lab_app'), app, { recursive: true });
    fresh = await freshDatabase();
    const env = { DATABASE_URL: fresh.url, QUIRE_APPS: `frappe,${app}`, PORT: '0' };
    const tenant = `apps${randomBytes(3).toString('hex')}`;
    const created = await quireJson(['tenant', 'create', tenant], env);
    expect(created.code).toBe(0);
    const auth = `token ${created.json.api_key}:${created.json.api_secret}`;

    let port = await serve(env);
    const before = await call(`http://127.0.0.1:${port}`, tenant, 'GET', '/api/method/lab_app.added.greet', { auth });
    expect(before.status).toBe(417);
    await running.pop()!.stop();

    fs.writeFileSync(
      path.join(app, 'added.ts'),
      `import { whitelist } from '@quire/apps';\n` +
        `export const greet = whitelist((args) => 'greetings ' + String(args.to ?? ''));\n` +
        `export function unmarked(): string { return 'never'; }\n`,
    );
    port = await serve(env);
    const url = `http://127.0.0.1:${port}`;
    const after = await call(url, tenant, 'GET', '/api/method/lab_app.added.greet', { auth, query: { to: 'you' } });
    expect(after.body).toEqual({ message: 'greetings you' });
    const refused = await call(url, tenant, 'GET', '/api/method/lab_app.added.unmarked', { auth });
    expect(refused.status).toBe(403);
    expect(refused.body.exc_type).toBe('PermissionError');
  }, 120_000);
});
