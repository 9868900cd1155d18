import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PgDatabase } from '@quire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgCluster, holdTableLock, pgClustersAvailable, type PgCluster } from '../support/pg-clusters';
import { quireJson, ROOT, spawnQuire } from '../support/process';
import { call, startTestServer, type TestServer } from '../support/server';
import { until } from '../support/until';
import { freshDatabase, type FreshDatabase } from './migrate-support';

/**
 * `quire tenant move` (issue 28, item 4): a tenant's schema moved between two real clusters by
 * logical replication while a load of reads and writes runs on it: no request fails, no write is
 * lost or doubled, autoincrement names keep counting, pending webhook events and login sessions come
 * along, and nothing of the replication is left on either side. Also resumed after the mover is
 * killed, and refused while another move of the tenant runs.
 */

const available = pgClustersAvailable();
if (!available.ok) console.log(`move tests skipped: ${available.reason}`);
const LAB_APP = path.join(ROOT, 'tests/fixtures/apps/lab_app');

describe.skipIf(!available.ok)('tenant move', () => {
  let platformDb: FreshDatabase;
  let b: PgCluster;
  let c: PgCluster;
  let server: TestServer;
  const env = (): NodeJS.ProcessEnv => ({ DATABASE_URL: platformDb.url, QUIRE_APPS: `frappe,${LAB_APP}` });
  const quire = (...args: string[]) => quireJson(args, env());
  const on = async <T>(cluster: PgCluster, sql: string, values: unknown[] = []): Promise<T[]> => {
    const db = new PgDatabase({ connectionString: cluster.url, poolSize: 1 });
    try {
      return (await db.query<T>(sql, values)).rows;
    } finally {
      await db.close();
    }
  };
  const leftovers = async (cluster: PgCluster) =>
    (
      await on<{ n: string }>(
        cluster,
        `SELECT ((SELECT count(*) FROM pg_subscription) + (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_replication_slots))::text AS n`,
      )
    )[0]?.n;

  beforeAll(async () => {
    [platformDb, b, c] = await Promise.all([freshDatabase(), createPgCluster(), createPgCluster()]);
    expect((await quire('migrate')).code).toBe(0);
    expect((await quire('cluster', 'add', 'b', '--url', b.url)).code).toBe(0);
    expect((await quire('cluster', 'add', 'c', '--url', c.url)).code).toBe(0);
    server = await startTestServer({ databaseUrl: platformDb.url, apps: [LAB_APP] });
  }, 90_000);
  afterAll(async () => {
    await server.close();
    await platformDb.drop();
    await Promise.all([b.stop(), c.stop()]);
  });

  async function tenantOn(cluster: string): Promise<{ name: string; auth: string }> {
    const name = `m${randomBytes(4).toString('hex')}`;
    const made = await quire('tenant', 'create', name, '--cluster', cluster, '--admin-password', 'move-test-pass-1');
    expect(made.code).toBe(0);
    const auth = `token ${String(made.json.api_key)}:${String(made.json.api_secret)}`;
    expect(
      (
        await until(
          () => call(server.url, name, 'GET', '/api/method/ping'),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
    return { name, auth };
  }

  it('moves a tenant under a load of reads and writes: no failed request, every write there once, held writes brief', async () => {
    const { name, auth } = await tenantOn('b');
    const schema = `t_${name}`;
    // Rows to copy: ToDos in bulk (SQL, as a tenant that has lived a while), and lab logs named by autoincrement.
    await on(
      b,
      `INSERT INTO "${schema}"."tabToDo" ("name", "description", "status", "creation", "modified", "owner", "modified_by")
      SELECT 'bulk-' || g, 'row ' || g, 'Open', now(), now(), 'Administrator', 'Administrator' FROM generate_series(1, 20000) g`,
    );
    for (let i = 0; i < 3; i++)
      expect((await call(server.url, name, 'POST', '/api/resource/Lab Log', { auth, json: { event: `before ${i}` } })).status).toBe(200);
    // A login session opened before the move must still work after it.
    const login = await call(server.url, name, 'POST', '/api/method/login', { json: { usr: 'Administrator', pwd: 'move-test-pass-1' } });
    const cookie = login.headers.get('set-cookie')?.split(';')[0] ?? '';
    // A webhook whose deliveries cannot succeed yet: its events stay pending, and must come along.
    const hook = await call(server.url, name, 'POST', '/api/resource/Webhook', {
      auth,
      json: {
        name: 'move-hook',
        webhook_doctype: 'Lab Log',
        webhook_docevent: 'after_insert',
        request_url: 'https://hooks.example.invalid/quire',
        request_structure: 'Form URL-Encoded',
      },
    });
    expect(hook.status, hook.text).toBe(200);
    expect((await call(server.url, name, 'POST', '/api/resource/Lab Log', { auth, json: { event: 'raises a webhook' } })).status).toBe(200);

    // The load: 4 writers and 2 readers, one request at a time each, until the move is over.
    let moving = true;
    const written: string[] = [];
    const failures: string[] = [];
    let reads = 0;
    const writer = async (w: number) => {
      for (let i = 0; moving; i++) {
        const res = await call(server.url, name, 'POST', '/api/resource/ToDo', { auth, json: { description: `w${w}-${i}` } });
        if (res.status === 200) written.push((res.body as { data: { name: string } }).data.name);
        else failures.push(`write ${res.status} ${res.text.slice(0, 200)}`);
      }
    };
    const reader = async () => {
      while (moving) {
        const res = await call(server.url, name, 'GET', '/api/resource/ToDo', { auth, query: { limit_page_length: 5, order_by: 'modified desc' } });
        if (res.status === 200) reads++;
        else failures.push(`read ${res.status} ${res.text.slice(0, 200)}`);
      }
    };
    const load = Promise.all([writer(1), writer(2), writer(3), writer(4), reader(), reader()]);
    await sleep(500);
    const moved = await quire('tenant', 'move', name, '--to', 'c');
    await sleep(500);
    moving = false;
    await load;
    expect(moved.code, JSON.stringify(moved.json)).toBe(0);
    expect(moved.json).toMatchObject({ tenant: name, from: 'b', to: 'c', keptSource: false });
    console.log(`move of ${name} (${String(moved.json.rows)} rows): ${JSON.stringify(moved.json.ms)}; ${written.length} writes and ${reads} reads meanwhile`);
    expect(failures).toEqual([]);
    expect(written.length).toBeGreaterThan(20);
    expect(moved.json.ms.writesHeld).toBeLessThan(3000);

    // Every write acknowledged is on c, once; the source copy is gone; nothing of the replication is left.
    const names = (await on<{ name: string }>(c, `SELECT "name" FROM "${schema}"."tabToDo" WHERE "name" NOT LIKE 'bulk-%'`)).map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.sort()).toEqual([...written].sort());
    expect((await on<{ n: string }>(c, `SELECT count(*)::text AS n FROM "${schema}"."tabToDo" WHERE "name" LIKE 'bulk-%'`))[0]?.n).toBe('20000');
    expect(await on(b, `SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema])).toEqual([]);
    expect(await leftovers(b)).toBe('0');
    expect(await leftovers(c)).toBe('0');
    const listed = await quire('tenant', 'list');
    expect(listed.json.tenants).toEqual(expect.arrayContaining([expect.objectContaining({ name, cluster: 'c' })]));

    // Served from c: autoincrement goes on from where it was, the session still signs in, the pending event is in c's outbox.
    const next = await call(server.url, name, 'POST', '/api/resource/Lab Log', { auth, json: { event: 'after the move' } });
    expect(next.status).toBe(200);
    expect(Number((next.body as { data: { name: string | number } }).data.name)).toBe(5);
    expect((await call(server.url, name, 'GET', '/api/method/frappe.auth.get_logged_user', { headers: { Cookie: cookie } })).body).toEqual({
      message: 'Administrator',
    });
    const events = await on<{ n: string }>(c, `SELECT count(*)::text AS n FROM quire.webhook_events WHERE "tenant" = $1`, [name]);
    expect(Number(events[0]?.n)).toBeGreaterThanOrEqual(1);
  }, 180_000);

  it('is resumed by running it again after the mover is killed, and refused while another move of the tenant runs', async () => {
    const { name, auth } = await tenantOn('b');
    const schema = `t_${name}`;
    await on(
      b,
      `INSERT INTO "${schema}"."tabToDo" ("name", "description", "status", "creation", "modified", "owner", "modified_by")
      SELECT 'bulk-' || g, 'row ' || g, 'Open', now(), now(), 'Administrator', 'Administrator' FROM generate_series(1, 5000) g`,
    );
    // The first mover is kept at its start (making the publication waits for this lock); it holds the tenant's move lock.
    const lock = await holdTableLock(b.url, `"${schema}"."tabToDo"`);
    const first = spawnQuire(['tenant', 'move', name, '--to', 'c'], env());
    await first.waitFor(/copying the schema/, 60_000);
    const second = await quire('tenant', 'move', name, '--to', 'c');
    expect(second.code).not.toBe(0);
    expect(String(second.json.error?.message)).toMatch(/Another move of this tenant is running/);
    await first.stop('SIGKILL');
    await lock.release();
    // Still served from b meanwhile.
    expect((await call(server.url, name, 'GET', '/api/resource/ToDo', { auth })).status).toBe(200);
    const elsewhere = await quire('tenant', 'move', name, '--to', 'default');
    expect(String(elsewhere.json.error?.message)).toMatch(/A move of .* to c is under way/);
    const resumed = await quire('tenant', 'move', name, '--to', 'c');
    expect(resumed.code, JSON.stringify(resumed.json)).toBe(0);
    expect(resumed.json).toMatchObject({ from: 'b', to: 'c' });
    expect((await on<{ n: string }>(c, `SELECT count(*)::text AS n FROM "${schema}"."tabToDo" WHERE "name" LIKE 'bulk-%'`))[0]?.n).toBe('5000');
    expect(await leftovers(b)).toBe('0');
    expect(await leftovers(c)).toBe('0');
    expect(
      (
        await until(
          () => call(server.url, name, 'POST', '/api/resource/ToDo', { auth, json: { description: 'on c' } }),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
  }, 180_000);
});
