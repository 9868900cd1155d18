import { randomBytes } from 'node:crypto';
import { PgDatabase } from '@quire/db';
import { createTenant, placeTenant } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgCluster, pgClustersAvailable, type PgCluster } from '../support/pg-clusters';
import { quireJson } from '../support/process';
import { call, startTestServer, type TestServer } from '../support/server';
import { until } from '../support/until';
import { freshDatabase, type FreshDatabase } from './migrate-support';

/**
 * Tenants on several Postgres clusters (issue 28): the registry (`quire cluster add|list|drain`),
 * placement by weight, and every tenant served, written, migrated and dropped on its own cluster.
 * Three clusters: the platform's own (`default`) and two made here with pg_createcluster.
 */

const available = pgClustersAvailable();
if (!available.ok) console.log(`clusters tests skipped: ${available.reason}`);

describe.skipIf(!available.ok)('clusters', () => {
  let platformDb: FreshDatabase;
  let b: PgCluster;
  let c: PgCluster;
  let server: TestServer;
  let second: TestServer;
  /** What `cluster add` printed for b (a literal URL with a password). */
  let addedB: Record<string, unknown>;
  const env = (): NodeJS.ProcessEnv => ({ DATABASE_URL: platformDb.url, CLUSTER_C_URL: c.url });
  const quire = (...args: string[]) => quireJson(args, env());
  const onCluster = async <T>(cluster: PgCluster, sql: string, values: unknown[] = []): Promise<T[]> => {
    const db = new PgDatabase({ connectionString: cluster.url, poolSize: 1 });
    try {
      return (await db.query<T>(sql, values)).rows;
    } finally {
      await db.close();
    }
  };
  const schemaOn = async (cluster: PgCluster | 'default', schema: string): Promise<boolean> => {
    const sql = `SELECT 1 FROM pg_namespace WHERE nspname = $1`;
    const rows = cluster === 'default' ? (await platformDb.db.query(sql, [schema])).rows : await onCluster(cluster, sql, [schema]);
    return rows.length === 1;
  };
  const tenantName = () => `k${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    [platformDb, b, c] = await Promise.all([freshDatabase(), createPgCluster(), createPgCluster()]);
    // The platform schema first (a process that migrates makes it), then the clusters.
    expect((await quire('migrate')).code).toBe(0);
    const withPassword = new URL(b.url);
    withPassword.password = 'not-needed-with-trust';
    const added = await quire('cluster', 'add', 'b', '--url', withPassword.toString());
    expect(added.code).toBe(0);
    addedB = added.json;
    expect((await quire('cluster', 'add', 'c', '--url', 'env:CLUSTER_C_URL', '--weight', '2')).code).toBe(0);
    // The servers read c's URL from their environment when its pool opens.
    process.env.CLUSTER_C_URL = c.url;
    server = await startTestServer({ databaseUrl: platformDb.url });
    // A second process on the same platform: what one changes, the other hears from the tenant's cluster.
    second = await startTestServer({ databaseUrl: platformDb.url, apiKeyTtlMs: 3_600_000 });
  }, 90_000);
  afterAll(async () => {
    await Promise.all([second.close(), server.close()]);
    await platformDb.drop();
    await Promise.all([b.stop(), c.stop()]);
  });

  it('`cluster add` refuses a URL it cannot reach, naming the host and never the password', async () => {
    const refused = await quire('cluster', 'add', 'nowhere', '--url', 'postgres://quire:s3cret-pw@127.0.0.1:1/postgres');
    expect(refused.code).not.toBe(0);
    const message = String(refused.json.error?.message);
    expect(message).toMatch(/Cannot reach cluster nowhere at postgres:\/\/quire:\*\*\*@127\.0\.0\.1:1\/postgres/);
    expect(JSON.stringify(refused.json)).not.toContain('s3cret-pw');
    const bad = await quire('cluster', 'add', 'Bad_Name', '--url', b.url);
    expect(bad.code).not.toBe(0);
    expect(String(bad.json.error?.message)).toMatch(/Invalid cluster name/);
  });

  it('registered clusters: a literal URL stored encrypted, an env: reference read when used, both listed', async () => {
    expect(addedB).toMatchObject({ name: 'b', weight: 1, state: 'active', tenants: 0, logical_replication: true });
    expect(addedB.url).toContain(':***@');
    expect(JSON.stringify(addedB)).not.toContain('not-needed-with-trust');
    // Again with the same reference (the chart's migrate Job at every upgrade): updated, not refused.
    expect((await quire('cluster', 'add', 'c', '--url', 'env:CLUSTER_C_URL', '--weight', '2')).code).toBe(0);
    expect((await quire('cluster', 'add', 'b', '--url', c.url)).code).not.toBe(0);

    const stored = await platformDb.db.query<{ url: string }>(`SELECT "url" FROM quire.clusters WHERE "name" = 'b'`);
    expect(stored.rows[0]?.url).toMatch(/^enc:/);
    expect(stored.rows[0]?.url).not.toContain('not-needed-with-trust');

    const list = await quire('cluster', 'list');
    expect(list.code).toBe(0);
    expect(list.json.clusters).toEqual([
      expect.objectContaining({ name: 'default', weight: 1, state: 'active', url: 'DATABASE_URL' }),
      expect.objectContaining({ name: 'b', weight: 1, state: 'active', tenants: 0 }),
      expect.objectContaining({ name: 'c', weight: 2, state: 'active', tenants: 0, url: 'env:CLUSTER_C_URL' }),
    ]);
    expect(JSON.stringify(list.json)).not.toContain('not-needed-with-trust');
    // Each cluster has its own schema for what tenants' transactions write besides their tables.
    const tables = await onCluster<{ table_name: string }>(b, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'quire' ORDER BY 1`);
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['webhook_events', 'tenant_templates', 'migrations']));
  }, 60_000);

  it('places new tenants by tenants per weight (1:1:2), deterministically', async () => {
    const placed: string[] = [];
    for (let i = 0; i < 8; i++) {
      const t = await createTenant(server.platform, { name: tenantName() });
      placed.push(t.cluster);
    }
    const count = (name: string) => placed.filter((p) => p === name).length;
    expect([count('default'), count('b'), count('c')]).toEqual([2, 2, 4]);
    // The next one goes where there is the most room per weight.
    expect(await placeTenant(server.platform.db)).toBe('b');
  }, 60_000);

  it('serves reads and writes of a tenant on another cluster, its rows there and nowhere else', async () => {
    const name = tenantName();
    const made = await quire('tenant', 'create', name, '--cluster', 'b');
    expect(made.code).toBe(0);
    expect(made.json).toMatchObject({ name, cluster: 'b' });
    const auth = `token ${String(made.json.api_key)}:${String(made.json.api_secret)}`;
    expect(
      (
        await until(
          () => call(server.url, name, 'GET', '/api/method/ping'),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
    const created = await call(server.url, name, 'POST', '/api/resource/ToDo', { auth, json: { description: 'lives on b' } });
    expect(created.status).toBe(200);
    const todo = (created.body as { data: { name: string } }).data.name;
    const read = await call(server.url, name, 'GET', `/api/resource/ToDo/${todo}`, { auth });
    expect(read.status).toBe(200);
    expect((read.body as { data: { description: string } }).data.description).toBe('lives on b');
    expect(await onCluster(b, `SELECT "description" FROM "t_${name}"."tabToDo" WHERE "name" = $1`, [todo])).toEqual([{ description: 'lives on b' }]);
    expect(await schemaOn('default', `t_${name}`)).toBe(false);
    const listed = await quire('tenant', 'list');
    expect(listed.json.tenants).toEqual(expect.arrayContaining([expect.objectContaining({ name, cluster: 'b' })]));
  }, 60_000);

  it("a user disabled through one process is refused by the other at once: it listens on the tenant's cluster", async () => {
    const t = await createTenant(second.platform, { name: tenantName(), cluster: 'c' });
    const auth = `token ${t.api_key}:${t.api_secret}`;
    expect(
      (
        await until(
          () => call(server.url, t.name, 'GET', '/api/method/ping'),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await until(
          () => call(second.url, t.name, 'GET', '/api/method/ping'),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
    const user = await call(server.url, t.name, 'POST', '/api/resource/User', {
      auth,
      json: { email: 'clerk@example.com', first_name: 'Clerk', roles: [{ role: 'System Manager' }] },
    });
    expect(user.status).toBe(200);
    const keys = await call(server.url, t.name, 'POST', '/api/method/frappe.core.doctype.user.user.generate_keys', {
      auth,
      json: { user: 'clerk@example.com' },
    });
    expect(keys.status).toBe(200);
    const secret = (keys.body as { message: { api_secret: string } }).message.api_secret;
    const key = (await call(server.url, t.name, 'GET', '/api/resource/User/clerk@example.com', { auth })).body as { data: { api_key: string } };
    const clerk = `token ${key.data.api_key}:${secret}`;
    // Cached by the second process (an hour's TTL): only the notification can end it.
    expect((await call(second.url, t.name, 'GET', '/api/method/frappe.auth.get_logged_user', { auth: clerk })).status).toBe(200);
    expect((await call(server.url, t.name, 'PUT', '/api/resource/User/clerk@example.com', { auth, json: { enabled: 0 } })).status).toBe(200);
    expect(
      (
        await until(
          () => call(second.url, t.name, 'GET', '/api/method/frappe.auth.get_logged_user', { auth: clerk }),
          (r) => r.status === 401,
          2_000,
        )
      ).status,
    ).toBe(401);
  }, 60_000);

  it('a draining cluster takes no new tenant, by placement or by --cluster; its tenants stay served', async () => {
    const name = tenantName();
    expect((await quire('tenant', 'create', name, '--cluster', 'c')).code).toBe(0);
    const drained = await quire('cluster', 'drain', 'c');
    expect(drained.json).toEqual({ name: 'c', state: 'draining' });
    const refused = await quire('tenant', 'create', tenantName(), '--cluster', 'c');
    expect(refused.code).not.toBe(0);
    expect(String(refused.json.error?.message)).toMatch(/Cluster c is draining/);
    for (let i = 0; i < 3; i++) expect(await placeTenant(server.platform.db)).not.toBe('c');
    expect(
      (
        await until(
          () => call(server.url, name, 'GET', '/api/method/ping'),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
    expect((await quire('cluster', 'undrain', 'c')).json).toEqual({ name: 'c', state: 'active' });
  }, 60_000);

  it('`quire migrate` goes over every cluster, and `tenant drop` removes the schema from its own', async () => {
    const name = tenantName();
    expect((await quire('tenant', 'create', name, '--cluster', 'b')).code).toBe(0);
    // As if this tenant had not been migrated to this build: migrate runs its migrations on b and records it.
    await platformDb.db.query(`DELETE FROM quire.tenant_releases WHERE "tenant" = $1`, [name]);
    const migrated = await quire('migrate');
    expect(migrated.code).toBe(0);
    expect(migrated.json.tenants[name]).toEqual({ status: 'up to date', changes: [] });
    const outcomes = Object.values(migrated.json.tenants as Record<string, { status: string }>).map((o) => o.status);
    expect(outcomes.length).toBeGreaterThan(10);
    expect(Object.keys(migrated.json.clusters ?? {})).toEqual(['b', 'c']);

    expect(await schemaOn(b, `t_${name}`)).toBe(true);
    expect((await quire('tenant', 'drop', name, '--yes')).code).toBe(0);
    expect(await schemaOn(b, `t_${name}`)).toBe(false);
    expect(
      (
        await until(
          () => call(server.url, name, 'GET', '/api/method/ping'),
          (r) => r.status === 404,
        )
      ).status,
    ).toBe(404);
  }, 90_000);
});
