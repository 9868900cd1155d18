import pg from 'pg';
import { ident } from './sql';
import { PG, pgErrorInfo } from './pg-errors';

/**
 * Makes the database a Postgres URL names when the server has none by that name (as `bench
 * new-site` does), through the server's `postgres` database with the same credentials. Answers
 * whether it made one; a server it cannot reach, or a role that may not create databases, is an
 * error that says what to do.
 */
export async function createDatabaseIfMissing(url: string): Promise<boolean> {
  const wanted = new URL(url);
  const name = decodeURIComponent(wanted.pathname.slice(1));
  if (await canConnect(url)) return false;
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  try {
    await client.connect();
    await client.query(`CREATE DATABASE ${ident(name)}`);
    return true;
  } catch (e) {
    // Another process made it meanwhile.
    if (pgErrorInfo(e)?.code === PG.duplicateDatabase) return false;
    throw new Error(`database "${name}" does not exist and could not be created (${(e as Error).message}): create it, e.g. \`createdb ${name}\``, { cause: e });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether the URL's database accepts a connection; false only when it does not exist (any other failure is thrown). */
async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return true;
  } catch (e) {
    if (pgErrorInfo(e)?.code === PG.invalidCatalogName) return false;
    throw e;
  } finally {
    await client.end().catch(() => undefined);
  }
}
