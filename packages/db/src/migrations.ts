import type { Database, Executor, Queryable } from './database';
import { ident, qualified } from './sql';

export interface Migration {
  /** Stable id, unique within its schema, e.g. `0001_tenants` or `auth:0001_tables`. Never renamed once released. */
  id: string;
  /** Runs inside the runner's transaction; `schema` is the schema being migrated. */
  up: (q: Queryable, schema: string) => Promise<void>;
}

export interface MigrationOptions {
  /** Serialize concurrent runners on a transaction-scoped advisory lock (Postgres; not the embedded driver). */
  lock: boolean;
}

/**
 * Applies the migrations of one schema that are not applied yet, in id order, each in the same
 * transaction as its bookkeeping row (`<schema>.migrations`). Runs in its own transaction, or as
 * a savepoint of the caller's (a tenant is installed in one transaction with everything else).
 * The one migration runner: the platform schema and every tenant's schema use it.
 */
export async function runMigrations(db: Executor, schema: string, migrations: readonly Migration[], options: MigrationOptions): Promise<string[]> {
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    if (options.lock) await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`quire:migrate:${schema}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
    const table = qualified(schema, 'migrations');
    await tx.query(`CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, applied_at timestamp(6) NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ id: string }>(`SELECT id FROM ${table}`)).rows.map((r) => r.id));
    for (const m of [...migrations].sort((a, b) => a.id.localeCompare(b.id))) {
      if (done.has(m.id)) continue;
      await m.up(tx, schema);
      await tx.query(`INSERT INTO ${table} (id) VALUES ($1)`, [m.id]);
      applied.push(m.id);
    }
  });
  return applied;
}

/**
 * Runs `fn` while holding the advisory lock `key`, so that a second holder waits until the first
 * is done. The lock is transaction-scoped on a connection of its own, held open for the whole of
 * `fn` (which works on other connections): a killed process's connection drops and the lock with
 * it, and a transaction pooler keeps that one server connection for the transaction. Without
 * advisory locks (the embedded driver, one process per data folder) `fn` just runs.
 */
export async function withAdvisoryLock<T>(db: Database, key: string, fn: () => Promise<T>): Promise<T> {
  if (!db.supportsAdvisoryLocks) return fn();
  return db.transaction(async (lock) => {
    // Waiting for another holder, and then holding, may take longer than any one request's statement may.
    await lock.query(`SET LOCAL statement_timeout = 0`);
    await lock.query(`SET LOCAL idle_in_transaction_session_timeout = 0`);
    await lock.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [key]);
    return fn();
  });
}
