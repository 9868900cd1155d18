import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { RENDERER_NOTICE } from '../chart/renderer';
import { startPgBouncer } from './pgbouncer';
import type {} from './vitest-context';

/**
 * The suite runs against this machine's real Postgres. A fresh database per run keeps runs
 * independent; inside it every test creates its own tenants.
 */
const ADMIN_URL = process.env.QUIRE_TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** One database per run, so concurrent runs on one machine never touch each other's data. */
const TEST_DATABASE = process.env.QUIRE_TEST_DATABASE ?? `quire_test_${process.pid}_${Date.now().toString(36)}`;

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Once per run: why the Helm chart's suites are skipped, or partly (tests/chart/renderer.ts).
  if (RENDERER_NOTICE) console.warn(RENDERER_NOTICE);
  await admin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${TEST_DATABASE}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${TEST_DATABASE}"`);
  });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${TEST_DATABASE}`;
  project.provide('databaseUrl', url.toString());
  // QUIRE_TEST_POOLER=pgbouncer: every Quire process the suite starts goes through PgBouncer in
  // transaction mode (LISTEN on the direct URL), as a cluster with many pods would.
  const pooler = process.env.QUIRE_TEST_POOLER === 'pgbouncer' ? await startPgBouncer(url) : undefined;
  if (pooler) {
    const pooled = new URL(url);
    pooled.port = String(pooler.port);
    project.provide('poolerEnv', { DATABASE_URL: pooled.toString(), DATABASE_DIRECT_URL: url.toString(), DATABASE_POOL_MODE: 'transaction' });
  } else project.provide('poolerEnv', {});
  return async () => {
    await pooler?.stop();
    await admin(async (client) => {
      await client.query(`DROP DATABASE IF EXISTS "${TEST_DATABASE}" WITH (FORCE)`);
    });
  };
}
