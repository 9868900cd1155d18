import type { Database, Queryable } from './database';
import { ident, qualified } from './sql';

export interface Migration {
  /** Stable, sortable id, e.g. `0001_tenants`. Never renamed once released. */
  id: string;
  up: (q: Queryable) => Promise<void>;
}

/**
 * Applies the migrations of one schema that are not applied yet, in id order, each in the same
 * transaction as its bookkeeping row. Concurrent runners serialize on an advisory lock.
 */
export async function runMigrations(db: Database, schema: string, migrations: readonly Migration[]): Promise<string[]> {
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    if (db.supportsAdvisoryLocks) await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`quire:migrate:${schema}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
    const table = qualified(schema, 'migrations');
    await tx.query(`CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, applied_at timestamp(6) NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ id: string }>(`SELECT id FROM ${table}`)).rows.map((r) => r.id));
    for (const m of [...migrations].sort((a, b) => a.id.localeCompare(b.id))) {
      if (done.has(m.id)) continue;
      await m.up(tx);
      await tx.query(`INSERT INTO ${table} (id) VALUES ($1)`, [m.id]);
      applied.push(m.id);
    }
  });
  return applied;
}
