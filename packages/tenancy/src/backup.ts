import { stat } from 'node:fs/promises';
import { qualified, type Queryable, type Transaction } from '@quire/db';
import { DoesNotExistError, ValidationError } from '@quire/errors';
import { fileKeyOfUrl } from '@quire/files';
import { createHash } from 'node:crypto';
import { keyIdOf, writeArchive, type ArchiveLine } from './backup-archive';
import type { Platform } from './platform';
import { readSchemaDdl } from './schema-ddl';

/**
 * `quire tenant backup <tenant> --out <file>`: one tenant, on its own, in one file (backup-archive.ts):
 * its schema's DDL, sequences and rows read in one snapshot (a repeatable-read, read-only
 * transaction on its cluster: writes go on meanwhile and none is half in it), its platform record
 * (status, settings, custom domains, release) and its uploaded files.
 *
 * Not in it: undelivered webhook events (delivered by the live tenant; a restored copy must not send
 * them again) and usage history. Cluster-wide backups are the database operator's (CloudNativePG).
 */

export interface BackupInput {
  tenant: string;
  /** The file written (beside it first, renamed when complete). */
  out: string;
  onProgress?: (progress: BackupProgress) => void;
}

export interface BackupProgress {
  step: 'tables' | 'files';
  done: number;
  total: number;
}

export interface BackupReport {
  tenant: string;
  cluster: string;
  file: string;
  /** Size of the archive in bytes. */
  bytes: number;
  tables: number;
  rows: number;
  files: number;
  fileBytes: number;
  /** Files that File rows name but the store did not have when they were read (deleted meanwhile). */
  missingFiles: string[];
  ms: number;
}

/** Rows read per round trip, and per archive line. */
const BATCH_ROWS = 1000;

/**
 * Settings the rows' JSON text depends on, the same when the backup reads them and when a restore
 * writes them back and checks their digests.
 */
export async function setStableOutput(tx: Queryable): Promise<void> {
  await tx.query(`SET LOCAL TimeZone = 'UTC'`);
  await tx.query(`SET LOCAL DateStyle = 'ISO, YMD'`);
  await tx.query(`SET LOCAL IntervalStyle = 'postgres'`);
  await tx.query(`SET LOCAL extra_float_digits = 1`);
  // Reading a large tenant takes longer than a request may.
  await tx.query(`SET LOCAL statement_timeout = 0`);
  await tx.query(`SET LOCAL idle_in_transaction_session_timeout = 0`);
}

/**
 * A table's content digest: its row count and the sum of the first 64 bits of each row's SHA-256
 * (of its JSON text). It does not depend on row order, so the backup and a restore, on clusters
 * that may sort text differently, compute it the same way, in the database.
 */
export async function tableDigest(q: Queryable, schema: string, table: string): Promise<{ rows: number; digest: string }> {
  const { rows } = await q.query<{ n: string | number; sum: string }>(
    `SELECT count(*) AS "n",
            coalesce(sum(('x' || encode(substr(sha256(convert_to(row_to_json(t)::text, 'UTF8')), 1, 8), 'hex'))::bit(64)::bigint::numeric), 0)::text AS "sum"
     FROM ${qualified(schema, table)} t`,
  );
  const n = Number(rows[0]?.n ?? 0);
  return { rows: n, digest: `${n}:${rows[0]?.sum ?? '0'}` };
}

interface TenantRecord {
  schema: string;
  cluster: string;
  status: string;
  config: Record<string, unknown>;
  moving_to: string | null;
  domains: string[];
  release: string | null;
}

async function tenantRecord(db: Queryable, name: string): Promise<TenantRecord> {
  const { rows } = await db.query<Omit<TenantRecord, 'config'> & { config: unknown }>(
    `SELECT t."schema", t."cluster", t."status", t."config", t."moving_to",
            coalesce((SELECT array_agg(d."domain" ORDER BY d."domain") FROM quire.tenant_domains d WHERE d."tenant" = t."name"), '{}') AS "domains",
            (SELECT r."release" FROM quire.tenant_releases r WHERE r."tenant" = t."name" ORDER BY r."migrated_at" DESC LIMIT 1) AS "release"
     FROM quire.tenants t WHERE t."name" = $1`,
    [name],
  );
  const row = rows[0];
  if (!row) throw new DoesNotExistError(`Tenant ${name} not found`);
  // JSON columns come back as their text (types.ts).
  const config: unknown = typeof row.config === 'string' ? JSON.parse(row.config) : row.config;
  return { ...row, config: (config ?? {}) as Record<string, unknown> };
}

/** Writes one tenant's backup (see above). */
export async function backupTenant(platform: Platform, input: BackupInput): Promise<BackupReport> {
  const started = performance.now();
  const tenant = await tenantRecord(platform.db, input.tenant);
  if (tenant.moving_to !== null) {
    throw new ValidationError(`Tenant ${input.tenant} is moving to cluster ${tenant.moving_to}: back it up once the move is done`, {
      title: 'Move Under Way',
    });
  }
  const report: BackupReport = {
    tenant: input.tenant,
    cluster: tenant.cluster,
    file: input.out,
    bytes: 0,
    tables: 0,
    rows: 0,
    files: 0,
    fileBytes: 0,
    missingFiles: [],
    ms: 0,
  };
  await platform.clusters.database(tenant.cluster).transaction(async (tx) => {
    await tx.query(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
    await setStableOutput(tx);
    const exists = await tx.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [tenant.schema]);
    if (exists.rows.length === 0) throw new DoesNotExistError(`Tenant ${input.tenant} has no schema on cluster ${tenant.cluster}`);
    await writeArchive(input.out, platform.secrets, archiveLines(platform, tx, input, tenant, report));
  });
  report.bytes = (await stat(input.out)).size;
  report.ms = Math.round(performance.now() - started);
  return report;
}

async function* archiveLines(platform: Platform, tx: Transaction, input: BackupInput, tenant: TenantRecord, report: BackupReport): AsyncGenerator<ArchiveLine> {
  const { schema } = tenant;
  yield {
    record: {
      kind: 'manifest',
      format: 'quire-tenant-backup',
      version: 1,
      tenant: input.tenant,
      schema,
      cluster: tenant.cluster,
      takenAt: new Date().toISOString(),
      release: tenant.release,
      keyId: keyIdOf(platform.secrets),
      status: tenant.status,
      config: tenant.config,
      domains: tenant.domains,
    },
  };
  const ddl = await readSchemaDdl(tx, schema);
  yield { record: { kind: 'ddl', tables: ddl.tables, constraints: ddl.constraints } };
  yield { record: { kind: 'sequences', values: await sequenceValues(tx, schema) } };
  const tables = await tableNames(tx, schema);
  for (const [i, table] of tables.entries()) {
    const { rows, digest } = await tableDigest(tx, schema, table);
    yield { record: { kind: 'table', name: table, rows, digest } };
    yield* tableRows(tx, schema, table);
    report.tables += 1;
    report.rows += rows;
    input.onProgress?.({ step: 'tables', done: i + 1, total: tables.length });
  }
  const files = tables.includes('tabFile') ? await fileKeys(tx, schema) : [];
  for (const [i, key] of files.entries()) {
    const path = key.slice(schema.length + 1);
    const data = await platform.files.get(key);
    if (data === undefined) {
      report.missingFiles.push(path);
      yield { record: { kind: 'file-missing', path } };
    } else {
      report.files += 1;
      report.fileBytes += data.length;
      yield { record: { kind: 'file', path, size: data.length, sha256: createHash('sha256').update(data).digest('hex') }, payload: data.toString('base64') };
    }
    input.onProgress?.({ step: 'files', done: i + 1, total: files.length });
  }
  yield { record: { kind: 'end', tables: report.tables, rows: report.rows, files: report.files, fileBytes: report.fileBytes } };
}

async function tableNames(q: Queryable, schema: string): Promise<string[]> {
  const { rows } = await q.query<{ table: string }>(
    `SELECT c.relname AS "table" FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname COLLATE "C"`,
    [schema],
  );
  return rows.map((r) => r.table);
}

/** Each sequence's position: read outside the snapshot (sequences are not transactional), so at or past it: never a name given twice. */
async function sequenceValues(q: Queryable, schema: string): Promise<{ name: string; value: string; called: boolean }[]> {
  const { rows: names } = await q.query<{ name: string }>(`SELECT sequencename AS "name" FROM pg_sequences WHERE schemaname = $1 ORDER BY 1`, [schema]);
  const values: { name: string; value: string; called: boolean }[] = [];
  for (const { name } of names) {
    const { rows } = await q.query<{ value: string; called: boolean }>(
      `SELECT last_value::text AS "value", is_called AS "called" FROM ${qualified(schema, name)}`,
    );
    if (rows[0]) values.push({ name, ...rows[0] });
  }
  return values;
}

/** A table's rows, BATCH_ROWS per line, as Postgres writes them as JSON (numbers keep every digit). */
async function* tableRows(tx: Transaction, schema: string, table: string): AsyncGenerator<ArchiveLine> {
  await tx.query(`DECLARE quire_backup_rows NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS "row" FROM ${qualified(schema, table)} t`);
  for (;;) {
    const { rows } = await tx.query<{ row: string }>(`FETCH ${BATCH_ROWS} FROM quire_backup_rows`);
    if (rows.length === 0) break;
    yield { record: { kind: 'rows', table, count: rows.length }, payload: `[${rows.map((r) => r.row).join(',')}]` };
  }
  await tx.query(`CLOSE quire_backup_rows`);
}

/** Store keys of the tenant's uploaded files (File rows share a URL when uploads were the same bytes). */
async function fileKeys(q: Queryable, schema: string): Promise<string[]> {
  const { rows } = await q.query<{ url: string }>(
    `SELECT DISTINCT "file_url" AS "url" FROM ${qualified(schema, 'tabFile')} WHERE coalesce("is_folder", 0) = 0 AND "file_url" IS NOT NULL ORDER BY 1`,
  );
  const keys = new Set<string>();
  for (const { url } of rows) {
    try {
      const key = fileKeyOfUrl(schema, url);
      if (key !== undefined) keys.add(key);
    } catch {
      // A URL no upload could have made (not a safe file name): there are no bytes of ours behind it.
    }
  }
  return [...keys];
}
