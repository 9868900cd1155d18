import pg from 'pg';
import type { TestProject } from 'vitest/node';

/**
 * The suite runs against this machine's real Postgres. A fresh database per run keeps runs
 * independent; inside it every test creates its own tenants.
 */
const ADMIN_URL = process.env.QUIRE_TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TEST_DATABASE = process.env.QUIRE_TEST_DATABASE ?? 'quire_test';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${TEST_DATABASE}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${TEST_DATABASE}"`);
  } finally {
    await client.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${TEST_DATABASE}`;
  project.provide('databaseUrl', url.toString());
}
