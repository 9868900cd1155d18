import { randomBytes } from 'node:crypto';
import { PgDatabase } from '@quire/db';
import type { MigrationReport, TenantMigrationStatus } from '@quire/tenancy';
import pg from 'pg';
import { afterEach } from 'vitest';
import { spawnQuire, type Spawned } from '../support/process';
import { databaseUrl } from '../support/server';

/**
 * Helpers for the `quire migrate` tests. Each test gets a database of its own on the suite's
 * Postgres (the tests look at every tenant and at the release as a whole, which a shared database
 * would make depend on the other test files), and runs the real CLI against it as a process.
 */

export interface FreshDatabase {
  url: string;
  name: string;
  /** A pool on the database, for assertions and for releaseStatus. */
  db: PgDatabase;
  drop(): Promise<void>;
}

function serverUrl(database: string): string {
  const url = new URL(databaseUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

async function onServer<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl('postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** One fresh database per test, dropped after it: `const databases = freshDatabasePerTest()`, then `await databases.create()` in a test. */
export function freshDatabasePerTest(): { create(): Promise<FreshDatabase> } {
  let current: FreshDatabase | undefined;
  afterEach(async () => {
    await current?.drop();
    current = undefined;
  });
  return {
    async create() {
      current = await freshDatabase();
      return current;
    },
  };
}

export async function freshDatabase(): Promise<FreshDatabase> {
  const suiteDatabase = new URL(databaseUrl()).pathname.slice(1);
  const name = `${suiteDatabase}_mig_${randomBytes(4).toString('hex')}`;
  await onServer((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = serverUrl(name);
  const db = new PgDatabase({ connectionString: url, poolSize: 3, applicationName: 'migrate-test' });
  return {
    url,
    name,
    db,
    async drop() {
      await db.close();
      await onServer((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

export interface QuireRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The one JSON object of a `--json` run (undefined otherwise). */
  json: unknown;
}

/** What `quire migrate --json` prints on success. */
export type MigrateJson = Pick<MigrationReport, 'release' | 'platform' | 'tenants' | 'clusters'>;

/** What a failing command prints with --json. */
export interface ErrorJson {
  error: { exc_type: string; message: string };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The run's JSON as a migrate report; throws (failing the test) with its output otherwise. */
export function migrateJson(run: QuireRun): MigrateJson {
  const { json } = run;
  if (isRecord(json) && typeof json.release === 'string' && Array.isArray(json.platform) && isRecord(json.tenants)) return json as unknown as MigrateJson;
  throw new Error(`not a migrate report (exit ${String(run.code)}): ${run.stdout}${run.stderr}`);
}

export function errorJson(run: QuireRun): ErrorJson {
  const { json } = run;
  if (isRecord(json) && isRecord(json.error) && typeof json.error.message === 'string') return json as unknown as ErrorJson;
  throw new Error(`not an error object (exit ${String(run.code)}): ${run.stdout}${run.stderr}`);
}

/** Tenant name → status of a migrate report. */
export function statuses(report: MigrateJson): Record<string, TenantMigrationStatus> {
  return Object.fromEntries(Object.entries(report.tenants).map(([name, outcome]) => [name, outcome.status]));
}

export interface StartedQuire {
  process: Spawned;
  stderr(): string;
  finished: Promise<QuireRun>;
}

/** Starts `quire <args>` against `url` as a real process. */
export function startQuire(args: string[], url: string): StartedQuire {
  const process = spawnQuire(args, { DATABASE_URL: url, LOG_LEVEL: 'silent', NODE_ENV: 'test', BASE_DOMAIN: 'localhost' });
  let stderr = '';
  process.child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const finished = new Promise<number | null>((resolve) => process.child.once('exit', (code) => resolve(code))).then((code) => {
    const stdout = process.stdout();
    const lines = stdout.split('\n').filter((l) => l.trim() !== '');
    const json: unknown = args.includes('--json') && lines.length === 1 ? JSON.parse(lines[0]!) : undefined;
    return { code, stdout, stderr, json };
  });
  return { process, stderr: () => stderr, finished };
}

export function runQuire(args: string[], url: string): Promise<QuireRun> {
  return startQuire(args, url).finished;
}

/**
 * A database as a previous release left it: the platform migrated, these tenants installed, but
 * none recorded at this build's release and each one's ToDo DocType changed since (a stale
 * definition hash), so `quire migrate` has real work for every one of them.
 */
export async function tenantsFromPreviousRelease(fresh: FreshDatabase, names: string[]): Promise<void> {
  const first = await runQuire(['migrate', '--json'], fresh.url);
  if (first.code !== 0) throw new Error(`quire migrate failed: ${first.stdout}${first.stderr}`);
  for (const created of await Promise.all(names.map((n) => runQuire(['tenant', 'create', n, '--json'], fresh.url)))) {
    if (created.code !== 0) throw new Error(`quire tenant create failed: ${created.stdout}${created.stderr}`);
  }
  await fresh.db.query(`DELETE FROM quire.tenant_releases WHERE "tenant" = ANY($1::text[])`, [names]);
  await fresh.db.query(`UPDATE quire.releases SET "completed_at" = NULL`);
  for (const n of names) await fresh.db.query(`UPDATE "t_${n}"."tabDocType" SET "migration_hash" = 'previous' WHERE "name" = 'ToDo'`);
}

export async function tenantsAtRelease(fresh: FreshDatabase, release: string): Promise<string[]> {
  const { rows } = await fresh.db.query<{ tenant: string }>(`SELECT "tenant" FROM quire.tenant_releases WHERE "release" = $1 ORDER BY "tenant" COLLATE "C"`, [
    release,
  ]);
  return rows.map((r) => r.tenant);
}

/**
 * Holds an ACCESS EXCLUSIVE lock on one tenant's DocType table from a connection of the test's
 * own, so a migration reaching that tenant waits there: a deterministic "in the middle of a run".
 */
export async function blockTenant(fresh: FreshDatabase, tenant: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: fresh.url, application_name: 'migrate-test-blocker' });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE "t_${tenant}"."tabDocType" IN ACCESS EXCLUSIVE MODE`);
  return {
    async release() {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** Lock requests waiting in the database, by kind (`relation`, `advisory`). */
export async function waitingLocks(fresh: FreshDatabase): Promise<string[]> {
  const { rows } = await fresh.db.query<{ locktype: string }>(
    `SELECT l.locktype FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = $1 AND NOT l.granted ORDER BY l.locktype`,
    [fresh.name],
  );
  return rows.map((r) => r.locktype);
}

/** Polls until `ok` holds (or fails after `ms`). */
export async function eventually(ok: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const started = Date.now();
  while (!(await ok())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
