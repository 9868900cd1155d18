import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ident, qualified, type Database } from '@quire/db';
import { createRuntime, loadRuntimeConfig, type Runtime } from '@quire/runtime';
import { createTenant, installTenant, migrateRelease, releaseOf, templateSchemaOf, type CreatedTenant } from '@quire/tenancy';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { platformEnv, uniqueName } from '../support/server';
import { freshDatabase, type FreshDatabase } from './migrate-support';

/**
 * Provisioning copies the release's template schema (recorded DDL in one round trip, rows in
 * another) instead of storing every standard DocType through the document lifecycle. What a
 * tenant gets must not depend on which way it was made.
 */

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

async function runtimeOn(url: string, env: NodeJS.ProcessEnv = {}): Promise<Runtime> {
  const config = loadRuntimeConfig({ ...platformEnv({ databaseUrl: url }), ...env });
  const rt = await createRuntime({ name: 'template-test', logger: pino({ level: 'silent' }), config });
  opened.push(rt);
  return rt;
}

async function database(): Promise<FreshDatabase> {
  const fresh = await freshDatabase();
  opened.push({ close: () => fresh.drop() });
  return fresh;
}

/** Tables, columns, indexes, constraints and sequences of a schema, with the schema's name taken out. */
async function catalog(db: Database, schema: string): Promise<string[]> {
  const { rows } = await db.query<{ line: string }>(
    `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || coalesce(character_maximum_length::text, '') || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS line
       FROM information_schema.columns WHERE table_schema = $1
     UNION ALL SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = $1
     UNION ALL SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(c.oid)
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1
     UNION ALL SELECT 'sequence ' || sequencename || ' ' || coalesce(last_value::text, '-') FROM pg_sequences WHERE schemaname = $1`,
    [schema],
  );
  return rows.map((r) => r.line.split(ident(schema)).join('<schema>').split(schema).join('<schema>')).sort();
}

/**
 * Each table's rows as sorted JSON, leaving out what differs by design: when they were made, child
 * rows' random names, and the tenant's own secrets.
 */
async function contents(db: Database, schema: string): Promise<Record<string, string[]>> {
  const { rows: tables } = await db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1`, [schema]);
  const out: Record<string, string[]> = {};
  for (const { table_name: table } of tables) {
    if (table === '__OAuthKeys' || table === '__Auth') continue;
    const { rows } = await db.query<Record<string, unknown>>(`SELECT * FROM ${qualified(schema, table)}`);
    out[table] = rows
      .map((r) => {
        const { creation: _c, modified: _m, applied_at: _a, api_key: _k, api_secret: _s, ...rest } = r;
        if ('parent' in rest) delete rest.name;
        return JSON.stringify(rest);
      })
      .sort();
  }
  return out;
}

/** Installs a tenant the long way beside `schema` and expects the same catalog and rows; returns `schema`'s rows. */
async function expectSameAsLongWay(rt: Runtime, schema: string): Promise<Record<string, string[]>> {
  const longWay = { name: uniqueName('long'), schema: `t_${uniqueName('long')}` };
  await installTenant(rt.db, longWay, rt.platform.apps, rt.platform);
  expect(await catalog(rt.db, schema)).toEqual(await catalog(rt.db, longWay.schema));
  const [a, b] = [await contents(rt.db, schema), await contents(rt.db, longWay.schema)];
  expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
  for (const table of Object.keys(a)) expect(a[table], table).toEqual(b[table]);
  return a;
}

describe('provisioning from the template', () => {
  it('gives a tenant the same tables, indexes and rows as installing it the long way', async () => {
    const fresh = await database();
    const rt = await runtimeOn(fresh.url);
    const copied = await createTenant(rt.platform, { name: uniqueName('tpl') });
    const a = await expectSameAsLongWay(rt, copied.schema);
    expect(a.tabDocType!.length).toBeGreaterThan(10);
    // Every tenant has its own signing key, and copied rows are stamped with their tenant's creation.
    const keys = await rt.db.query<{ kid: string }>(`SELECT "kid" FROM ${qualified(copied.schema, '__OAuthKeys')}`);
    expect(keys.rows).toHaveLength(1);
    const stamps = await rt.db.query<{ creation: string }>(`SELECT min("creation")::text AS creation FROM ${qualified(copied.schema, 'tabDocType')}`);
    const made = await rt.db.query<{ created_at: string }>(`SELECT "created_at"::text FROM quire.tenants WHERE "name" = $1`, [copied.name]);
    expect(Math.abs(Date.parse(`${stamps.rows[0]!.creation}Z`) - Date.parse(`${made.rows[0]!.created_at}Z`))).toBeLessThan(60_000);
  });

  it('builds the template once per release, also when processes race for it', async () => {
    const fresh = await database();
    const [one, two] = [await runtimeOn(fresh.url), await runtimeOn(fresh.url)];
    const names = [uniqueName('race'), uniqueName('race'), uniqueName('race'), uniqueName('race')];
    const made = await Promise.all(names.map((name, i) => createTenant((i % 2 ? one : two).platform, { name })));
    expect(made.map((t) => t.name)).toEqual(names);
    const { rows } = await fresh.db.query<{ schema: string }>(`SELECT "schema" FROM quire.tenant_templates`);
    expect(rows).toEqual([{ schema: templateSchemaOf(releaseOf(one.platform.apps)) }]);
    for (const t of made) {
      const users = await fresh.db.query(`SELECT "name" FROM ${qualified(t.schema, 'tabUser')} ORDER BY "name"`);
      expect(users.rows).toEqual([{ name: 'Administrator' }, { name: 'Guest' }]);
    }
  });

  it("sets the Administrator's email as the User controller would store it, and refuses an invalid one with nothing written", async () => {
    const fresh = await database();
    const rt = await runtimeOn(fresh.url);
    const t = await createTenant(rt.platform, { name: uniqueName('mail'), adminEmail: '  Boss@Example.COM ' });
    const user = await rt.db.query(`SELECT "email" FROM ${qualified(t.schema, 'tabUser')} WHERE "name" = 'Administrator'`);
    expect(user.rows).toEqual([{ email: 'boss@example.com' }]);
    const name = uniqueName('bad');
    await expect(createTenant(rt.platform, { name, adminEmail: 'not an email' })).rejects.toThrow(/not a valid Email Address/);
    expect((await rt.db.query(`SELECT 1 FROM quire.tenants WHERE "name" = $1`, [name])).rows).toEqual([]);
    expect((await rt.db.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [`t_${name}`])).rows).toEqual([]);
  });

  it('`quire migrate` drops the templates of older releases once the release is complete', async () => {
    const fresh = await database();
    const rt = await runtimeOn(fresh.url);
    await createTenant(rt.platform, { name: uniqueName('mig') });
    const stale = templateSchemaOf('0'.repeat(64));
    await rt.db.query(`CREATE SCHEMA ${ident(stale)}`);
    await rt.db.query(`INSERT INTO quire.tenant_templates ("release", "schema", "ddl", "tables", "sequences") VALUES ($1, $2, '[]', '[]', '[]')`, [
      '0'.repeat(64),
      stale,
    ]);
    const report = await migrateRelease(rt.platform);
    expect(report.droppedTemplates).toEqual([stale]);
    expect((await rt.db.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [stale])).rows).toEqual([]);
    const kept = await rt.db.query<{ schema: string }>(`SELECT "schema" FROM quire.tenant_templates`);
    expect(kept.rows).toHaveLength(1);
    expect((await rt.db.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [kept.rows[0]!.schema])).rows).toHaveLength(1);
  });

  it('works the same on the embedded database (one round trip there is one exec)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-template-'));
    const { DATABASE_URL: _url, DATABASE_DIRECT_URL: _direct, DATABASE_POOL_MODE: _mode, ...env } = platformEnv();
    const rt = await createRuntime({
      name: 'template-pglite',
      logger: pino({ level: 'silent' }),
      config: loadRuntimeConfig({ ...env, QUIRE_DATA_DIR: dataDir }),
    });
    opened.push({ close: () => rt.close().finally(() => fs.rmSync(dataDir, { recursive: true, force: true })) });
    expect(rt.db.kind).toBe('pglite');
    // One session there: spares would hold up requests while they are made.
    expect(rt.platform.spares.count).toBe(0);
    const a = await createTenant(rt.platform, { name: uniqueName('emb') });
    const b = await createTenant(rt.platform, { name: uniqueName('emb') });
    expect(await catalog(rt.db, a.schema)).toEqual(await catalog(rt.db, b.schema));
    const todos = await rt.db.query(`SELECT count(*)::int AS n FROM ${qualified(b.schema, 'tabDocType')}`);
    expect((todos.rows[0] as { n: number }).n).toBeGreaterThan(10);
  });
});

/** The spare schemas ready in a database: their names, by age. */
async function spares(db: Database): Promise<string[]> {
  const { rows } = await db.query<{ schema: string }>(`SELECT "schema" FROM quire.tenant_spares ORDER BY "created_at"`);
  return rows.map((r) => r.schema);
}

async function schemaExists(db: Database, schema: string): Promise<boolean> {
  return (await db.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema])).rows.length === 1;
}

/** Seconds between a tenant's registration and the oldest stamp on its DocTypes. */
async function stampLag(db: Database, t: CreatedTenant): Promise<number> {
  const { rows } = await db.query<{ lag: number }>(
    `SELECT abs(extract(epoch FROM (SELECT min("creation") FROM ${qualified(t.schema, 'tabDocType')}) - "created_at"))::float AS "lag" FROM quire.tenants WHERE "name" = $1`,
    [t.name],
  );
  return rows[0]!.lag;
}

describe('spare tenant schemas', () => {
  it('a tenant takes a spare made ahead: the same schema as the long way, stamped at its own creation, and the spares are made again', async () => {
    const fresh = await database();
    const rt = await runtimeOn(fresh.url, { TENANT_SPARES: '2' });
    const first = await createTenant(rt.platform, { name: uniqueName('first') });
    await rt.platform.spares.idle();
    const ready = await spares(rt.db);
    expect(ready).toHaveLength(2);
    // Made ahead: a tenant created a while later must not carry the spare's time on its rows.
    await new Promise((r) => setTimeout(r, 1100));
    const took = await createTenant(rt.platform, { name: uniqueName('spare') });
    expect(await schemaExists(rt.db, ready[0]!)).toBe(false);
    expect(await stampLag(rt.db, took)).toBeLessThan(1);
    await expectSameAsLongWay(rt, took.schema);
    // Its own signing key and API key, not the spare's or another tenant's.
    const kid = async (t: CreatedTenant) => (await rt.db.query<{ kid: string }>(`SELECT "kid" FROM ${qualified(t.schema, '__OAuthKeys')}`)).rows;
    expect(await kid(took)).toHaveLength(1);
    expect((await kid(took))[0]!.kid).not.toBe((await kid(first))[0]!.kid);
    await rt.platform.spares.idle();
    const after = await spares(rt.db);
    expect(after).toHaveLength(2);
    expect(after[0]).toBe(ready[1]);
    // What the metrics read: the first tenant found none ready, the second took one.
    expect(await rt.platform.spares.ready(releaseOf(rt.platform.apps))).toBe(2);
    expect(rt.platform.spares.stats).toEqual({ taken: 1, missed: 1 });
  });

  it('a creation that fails puts its spare back, untouched', async () => {
    const fresh = await database();
    const rt = await runtimeOn(fresh.url, { TENANT_SPARES: '1' });
    await createTenant(rt.platform, { name: uniqueName('first') });
    await rt.platform.spares.idle();
    const [spare] = await spares(rt.db);
    const name = uniqueName('bad');
    await expect(createTenant(rt.platform, { name, adminEmail: 'not an email' })).rejects.toThrow(/not a valid Email Address/);
    expect(await spares(rt.db)).toEqual([spare]);
    expect(await schemaExists(rt.db, spare!)).toBe(true);
    expect(await schemaExists(rt.db, `t_${name}`)).toBe(false);
    expect((await rt.db.query(`SELECT 1 FROM quire.tenants WHERE "name" = $1`, [name])).rows).toEqual([]);
  });

  it('processes creating tenants at once each take a different spare, fall back to the template when none is left, and keep the count', async () => {
    const fresh = await database();
    const [one, two] = [await runtimeOn(fresh.url, { TENANT_SPARES: '2' }), await runtimeOn(fresh.url, { TENANT_SPARES: '2' })];
    await createTenant(one.platform, { name: uniqueName('first') });
    await one.platform.spares.idle();
    const names = Array.from({ length: 6 }, () => uniqueName('burst'));
    const made = await Promise.all(names.map((name, i) => createTenant((i % 2 ? one : two).platform, { name })));
    expect(new Set(made.map((t) => t.schema)).size).toBe(6);
    for (const t of made) {
      const users = await fresh.db.query(`SELECT "name" FROM ${qualified(t.schema, 'tabUser')} ORDER BY "name"`);
      expect(users.rows).toEqual([{ name: 'Administrator' }, { name: 'Guest' }]);
    }
    await Promise.all([one.platform.spares.idle(), two.platform.spares.idle()]);
    const ready = await spares(fresh.db);
    expect(ready).toHaveLength(2);
    for (const s of ready) expect(await schemaExists(fresh.db, s)).toBe(true);
    // No spare schema left behind without its row.
    const { rows } = await fresh.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname LIKE 'quire\\_spare\\_%'`);
    expect(rows[0]!.n).toBe(2);
  });

  it("`quire migrate` drops the spares of older releases and makes this release's", async () => {
    const fresh = await database();
    const rt = await runtimeOn(fresh.url, { TENANT_SPARES: '1' });
    await createTenant(rt.platform, { name: uniqueName('mig') });
    await rt.platform.spares.idle();
    const stale = 'quire_spare_0000000000000000';
    await rt.db.query(`CREATE SCHEMA ${ident(stale)}`);
    await rt.db.query(`INSERT INTO quire.tenant_spares ("schema", "release") VALUES ($1, $2)`, [stale, '0'.repeat(64)]);
    await rt.db.query(`DELETE FROM quire.tenant_spares WHERE "release" = $1`, [releaseOf(rt.platform.apps)]);
    const report = await migrateRelease(rt.platform);
    expect(report.droppedSpares).toEqual([stale]);
    expect(await schemaExists(rt.db, stale)).toBe(false);
    await rt.platform.spares.idle();
    const { rows } = await rt.db.query<{ release: string }>(`SELECT "release" FROM quire.tenant_spares`);
    expect(rows).toEqual([{ release: releaseOf(rt.platform.apps) }]);
  });

  it('TENANT_SPARES=0 makes none', async () => {
    const fresh = await database();
    const rt = await runtimeOn(fresh.url, { TENANT_SPARES: '0' });
    await createTenant(rt.platform, { name: uniqueName('none') });
    await rt.platform.spares.idle();
    expect(await spares(rt.db)).toEqual([]);
  });
});
