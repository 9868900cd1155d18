import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SESSIONS_TABLE } from '@quire/auth';
import { ident, pgErrorInfo, PG, publishInvalidation, qualified, type Database, type Queryable, type Transaction } from '@quire/db';
import { DoesNotExistError, DuplicateEntryError, ValidationError } from '@quire/errors';
import { contentTypeOf, fileKey, fileKeyOfUrl } from '@quire/files';
import { invalidBackup, readArchive, verifyArchive, type BackupManifest } from './backup-archive';
import { setStableOutput, tableDigest } from './backup';
import { DEFAULT_CLUSTER, placeTenant } from './clusters';
import { filePurgePending } from './file-purge';
import { migrateTenant } from './install';
import type { Platform } from './platform';
import { chosenCluster, schemaOf, tenantName } from './provision';
import { recordTenantRelease, releaseOf } from './release';
import { applySchemaDdl } from './schema-ddl';

/**
 * `quire tenant restore <file> --as <name> [--cluster <c>]`, or `--replace`: a tenant's backup
 * (backup.ts) made a tenant again.
 *
 * - `--as <name>`: a new tenant beside the others (the customer's "yesterday's copy beside today's"),
 *   with its own host; the backup's custom domains stay with the tenant they belong to.
 * - `--replace`: the backup's tenant (or `--as`'s) gets the backup's data in place of its own, on its
 *   cluster, with its settings and domains as they are now. The restored copy is made beside the live
 *   one and swapped in at once (schema renames in one transaction); the replaced data is dropped
 *   10 s later, when no process still reads it.
 *
 * The file is checked whole (signature, see backup-archive.ts) before anything runs; its rows are
 * loaded in one transaction and each table's digest is compared with the backup's before it commits,
 * so a restore is exact or nothing. The copy is then migrated to the running release. Sessions are
 * not restored (everyone signs in again: a session ended since must not come back); API keys, OAuth
 * clients and tokens are, as they were.
 */

export interface RestoreInput {
  file: string;
  /** The tenant made (or replaced, with `replace`). Without it, `replace` names the backup's own tenant. */
  as?: string;
  replace?: boolean;
  /** Where a new tenant goes (not a draining cluster); by default the one with the most room. */
  cluster?: string;
  onProgress?: (progress: RestoreProgress) => void;
  /** How long replaced data is kept after the swap before it is dropped (default 10 s). */
  replacedGraceMs?: number;
}

export interface RestoreProgress {
  step: 'checking' | 'tables' | 'files' | 'switching' | 'done';
  done?: number;
  total?: number;
}

export interface RestoreReport {
  tenant: string;
  /** The tenant the backup was taken of, and when. */
  from: string;
  takenAt: string;
  cluster: string;
  replaced: boolean;
  hosts: string[];
  tables: number;
  rows: number;
  files: number;
  /** DocType and schema changes made to bring it to the running release. */
  migrated: string[];
  ms: number;
}

interface Loaded {
  tables: number;
  rows: number;
  files: number;
  migrated: string[];
}

/** Restores a backup (see above). */
export async function restoreTenant(platform: Platform, input: RestoreInput): Promise<RestoreReport> {
  const started = performance.now();
  input.onProgress?.({ step: 'checking' });
  const manifest = await verifyArchive(input.file, platform.secrets);
  if (input.as === undefined && !input.replace) throw new ValidationError('Name the tenant to restore as (--as <name>), or --replace the backup’s own');
  const name = tenantName(input.as ?? manifest.tenant);
  const done = input.replace ? await replaceTenant(platform, input, name) : await cloneTenant(platform, input, manifest, name);
  await platform.tenants.refreshOne(name);
  platform.forget(name);
  input.onProgress?.({ step: 'done' });
  const tenant = platform.tenants.get(name);
  return {
    tenant: name,
    from: manifest.tenant,
    takenAt: manifest.takenAt,
    cluster: done.cluster,
    replaced: input.replace === true,
    hosts: tenant ? platform.tenants.hostsOf({ name, domains: tenant.domains }) : [],
    tables: done.tables,
    rows: done.rows,
    files: done.files,
    migrated: done.migrated,
    ms: Math.round(performance.now() - started),
  };
}

// ----------------------------------------------------------------------------------------- clone

/** A new tenant from the backup: registered, loaded and recorded in one transaction (two when its cluster is not the platform's). */
async function cloneTenant(platform: Platform, input: RestoreInput, manifest: BackupManifest, name: string): Promise<Loaded & { cluster: string }> {
  const { db } = platform;
  const schema = schemaOf(name);
  const cluster = input.cluster === undefined ? await placeTenant(db) : await chosenCluster(db, input.cluster);
  // Links in its emails point at its own host, not the original's public URL.
  const { host_name: _hostName, ...config } = manifest.config;
  let committedOnCluster = false;
  const loaded = await db
    .transaction(async (tx) => {
      try {
        await tx.query(`INSERT INTO quire.tenants ("name", "schema", "cluster", "config") VALUES ($1, $2, $3, $4::jsonb)`, [
          name,
          schema,
          cluster,
          JSON.stringify(config),
        ]);
      } catch (e) {
        if (pgErrorInfo(e)?.code === PG.uniqueViolation) throw new DuplicateEntryError(`Tenant ${name} already exists (restore over it with --replace)`);
        throw e;
      }
      if (await filePurgePending(tx, schema)) {
        throw new ValidationError(`Tenant ${name} was dropped a moment ago and its files are still being removed: try again in a minute`, {
          title: 'Tenant Being Removed',
        });
      }
      const load = async (on: Transaction): Promise<Loaded> => {
        // A schema left by a restore or create that died between its two commits: no tenant holds it (this transaction has the name).
        await on.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
        return loadArchive(platform, on, input, { name, schema, filesOf: schema });
      };
      const result = cluster === DEFAULT_CLUSTER ? await load(tx) : await platform.clusters.database(cluster).transaction(load);
      committedOnCluster = cluster !== DEFAULT_CLUSTER;
      await recordTenantRelease(tx, name, releaseOf(platform.apps));
      await publishInvalidation(tx, { topic: 'tenant', tenant: name });
      return result;
    })
    .catch(async (e: unknown) => {
      // Nothing of a restore that did not register its tenant stays behind: its files, its schema on another cluster.
      if (!(e instanceof DuplicateEntryError)) await platform.files.deleteAll(schema).catch(() => {});
      if (committedOnCluster) {
        await platform.clusters
          .database(cluster)
          .query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`)
          .catch(() => {});
      }
      throw e;
    });
  return { ...loaded, cluster };
}

// --------------------------------------------------------------------------------------- replace

/**
 * The tenant's data replaced by the backup's: loaded beside the live schema (committed), files put
 * under the tenant's keys, then both schemas renamed in one transaction; every process reads the
 * restored data from its next query. Files only the replaced data named, and the replaced data, go
 * after the grace.
 */
async function replaceTenant(platform: Platform, input: RestoreInput, name: string): Promise<Loaded & { cluster: string }> {
  const { rows } = await platform.db.query<{ schema: string; cluster: string; moving_to: string | null }>(
    `SELECT "schema", "cluster", "moving_to" FROM quire.tenants WHERE "name" = $1`,
    [name],
  );
  const tenant = rows[0];
  if (!tenant) throw new DoesNotExistError(`Tenant ${name} not found: restore the backup as a new tenant with --as ${name}`);
  if (tenant.moving_to !== null)
    throw new ValidationError(`Tenant ${name} is moving to cluster ${tenant.moving_to}: restore once the move is done`, { title: 'Move Under Way' });
  if (input.cluster !== undefined && input.cluster !== tenant.cluster) {
    throw new ValidationError(
      `--replace restores a tenant on its own cluster (${tenant.cluster}); move it afterwards with quire tenant move ${name} --to ${input.cluster}`,
    );
  }
  const cluster = platform.clusters.database(tenant.cluster);
  const { schema } = tenant;
  // Prefixes no tenant's schema has (theirs begin with t_): the restored copy until the swap, the replaced data after it.
  const staged = `r_${schema}`;
  const replaced = `o_${schema}`;
  const loaded = await cluster
    .transaction(async (tx) => {
      await tx.query(`DROP SCHEMA IF EXISTS ${ident(staged)} CASCADE`);
      return loadArchive(platform, tx, input, { name, schema: staged, filesOf: schema });
    })
    .catch(async (e: unknown) => {
      await cluster.query(`DROP SCHEMA IF EXISTS ${ident(staged)} CASCADE`).catch(() => {});
      throw e;
    });
  input.onProgress?.({ step: 'switching' });
  await cluster.transaction(async (tx) => {
    // Replaced data a restore that stopped before its clean-up left (no tenant reads it).
    await tx.query(`DROP SCHEMA IF EXISTS ${ident(replaced)} CASCADE`);
    await tx.query(`ALTER SCHEMA ${ident(schema)} RENAME TO ${ident(replaced)}`);
    await tx.query(`ALTER SCHEMA ${ident(staged)} RENAME TO ${ident(schema)}`);
  });
  await platform.db.transaction(async (tx) => {
    await tx.query(`DELETE FROM quire.tenant_releases WHERE "tenant" = $1`, [name]);
    await recordTenantRelease(tx, name, releaseOf(platform.apps));
    // Its DocTypes may differ from the replaced data's: every process reads them again.
    await tx.query(`UPDATE quire.tenants SET "meta_version" = "meta_version" + 1 WHERE "name" = $1`, [name]);
    await publishInvalidation(tx, { topic: 'tenant', tenant: name });
  });
  await sleep(input.replacedGraceMs ?? 10_000);
  await deleteReplacedFiles(platform, cluster, { schema, replaced });
  await cluster.query(`DROP SCHEMA IF EXISTS ${ident(replaced)} CASCADE`);
  return { ...loaded, cluster: tenant.cluster };
}

/** Files the replaced data's File rows named and the restored data's do not. */
async function deleteReplacedFiles(platform: Platform, db: Database, s: { schema: string; replaced: string }): Promise<void> {
  const urls = async (schema: string): Promise<Set<string>> => {
    const exists = await db.query(`SELECT to_regclass($1) IS NOT NULL AS "ok"`, [`${ident(schema)}."tabFile"`]);
    if (!(exists.rows[0] as { ok?: boolean } | undefined)?.ok) return new Set();
    const { rows } = await db.query<{ url: string }>(`SELECT DISTINCT "file_url" AS "url" FROM ${qualified(schema, 'tabFile')} WHERE "file_url" IS NOT NULL`);
    return new Set(rows.map((r) => r.url));
  };
  const kept = await urls(s.schema);
  for (const url of await urls(s.replaced)) {
    if (kept.has(url)) continue;
    try {
      const key = fileKeyOfUrl(s.schema, url);
      if (key !== undefined) await platform.files.delete(key);
    } catch {
      // Not a URL an upload made: no bytes of ours behind it.
    }
  }
}

// ------------------------------------------------------------------------------------------ load

interface LoadTarget {
  name: string;
  /** The schema made (the tenant's own, or a staging one). */
  schema: string;
  /** The tenant schema whose keys the files are stored under. */
  filesOf: string;
}

/**
 * Makes `target.schema` from the archive in `tx`: tables, rows (checked against the backup's
 * digests), constraints and indexes, sequences; puts its files; drops its sessions; migrates it.
 */
async function loadArchive(platform: Platform, tx: Transaction, input: RestoreInput, target: LoadTarget): Promise<Loaded> {
  await setStableOutput(tx);
  await tx.query(`CREATE SCHEMA ${ident(target.schema)}`);
  const expected = new Map<string, { rows: number; digest: string }>();
  let constraints: string[] = [];
  let sequences: { name: string; value: string; called: boolean }[] = [];
  let tablesTotal = 0;
  let files = 0;
  for await (const { record, payload } of readArchive(input.file)) {
    switch (record.kind) {
      case 'ddl':
        await applySchemaDdl(tx, target.schema, record.tables);
        constraints = record.constraints;
        tablesTotal = record.tables.filter((s) => s.startsWith('CREATE TABLE')).length;
        break;
      case 'sequences':
        sequences = record.values;
        break;
      case 'table':
        expected.set(record.name, { rows: record.rows, digest: record.digest });
        input.onProgress?.({ step: 'tables', done: expected.size, total: tablesTotal });
        break;
      case 'rows':
        await insertRows(tx, target.schema, record.table, payload ?? '[]');
        break;
      case 'file':
        await putFile(platform, target.filesOf, record, payload ?? '');
        files += 1;
        input.onProgress?.({ step: 'files', done: files });
        break;
      case 'manifest':
      case 'file-missing':
      case 'end':
        break;
    }
  }
  const rows = await checkDigests(tx, target.schema, expected);
  await applySchemaDdl(tx, target.schema, constraints);
  for (const s of sequences) await tx.query(`SELECT setval($1::regclass, $2::bigint, $3)`, [qualified(target.schema, s.name), s.value, s.called]);
  if (expected.has(SESSIONS_TABLE)) await tx.query(`DELETE FROM ${qualified(target.schema, SESSIONS_TABLE)}`);
  const migrated = await migrateTenant(tx, { name: target.name, schema: target.schema }, platform.apps, {
    changes: platform.changes,
    files: platform.files,
    secrets: platform.secrets,
    lockMigrations: false,
  });
  return { tables: expected.size, rows, files, migrated };
}

/** One line of rows (a JSON array as Postgres wrote it) into its table, in the database: no number passes through JavaScript. */
async function insertRows(q: Queryable, schema: string, table: string, json: string): Promise<void> {
  const t = qualified(schema, table);
  await q.query(`INSERT INTO ${t} SELECT * FROM json_populate_recordset(NULL::${t}, $1::json)`, [json]);
}

/** Every table's rows as the backup had them (count and digest), or the restore is undone. Returns the rows. */
async function checkDigests(q: Queryable, schema: string, expected: ReadonlyMap<string, { rows: number; digest: string }>): Promise<number> {
  let rows = 0;
  for (const [table, want] of expected) {
    const got = await tableDigest(q, schema, table);
    if (got.digest !== want.digest) {
      throw invalidBackup(`Table ${table} does not read back as the backup has it (${got.rows} rows restored of ${want.rows}): nothing was restored`);
    }
    rows += got.rows;
  }
  return rows;
}

/** A file's bytes, checked against the backup's size and SHA-256, under the tenant's key. */
async function putFile(platform: Platform, schema: string, record: { path: string; size: number; sha256: string }, base64: string): Promise<void> {
  const match = /^(public|private)\/files\/([^/]+)$/.exec(record.path);
  if (!match?.[1] || !match[2]) throw invalidBackup(`The backup names a file at ${JSON.stringify(record.path)}, which no upload makes`);
  const data = Buffer.from(base64, 'base64');
  if (data.length !== record.size || createHash('sha256').update(data).digest('hex') !== record.sha256) {
    throw invalidBackup(`File ${record.path} in the backup is damaged`);
  }
  await platform.files.put(fileKey(schema, match[1] === 'private', match[2]), data, contentTypeOf(match[2]));
}
