import { pgErrorInfo, PG, publishInvalidation } from '@quire/db';
import { DoesNotExistError, DuplicateEntryError, ValidationError } from '@quire/errors';
import { clusterName, DEFAULT_CLUSTER, displayUrl, migrateClusterSchema, readClusters, storedUrl, type ClusterState } from './clusters';
import type { Platform } from './platform';

/** `quire cluster add|list|drain`: the registry of Postgres clusters tenants' schemas live on (clusters.ts). */

export interface AddClusterInput {
  name: string;
  /** postgres://…, env:VARIABLE or file:/path (a mounted Secret). */
  url: string;
  /** For LISTEN when `url` goes through a transaction pooler. */
  directUrl?: string | undefined;
  poolMode?: 'session' | 'transaction' | undefined;
  weight?: number | undefined;
}

export interface ClusterSummary {
  name: string;
  weight: number;
  state: ClusterState;
  /** How many tenants' schemas are on it. */
  tenants: number;
  /** The URL with its password hidden, or the reference it is read from. */
  url: string;
  pool_mode: 'session' | 'transaction';
  /** Whether it can be a move's source or target (wal_level=logical); null for a cluster not checked. */
  logical_replication: boolean | null;
}

function checkWeight(weight: number): number {
  if (!Number.isInteger(weight) || weight < 1 || weight > 1000) throw new ValidationError('A cluster weight is a whole number from 1 to 1000');
  return weight;
}

/**
 * Registers a cluster once it answers: reachable, PostgreSQL 15 or later (publications of whole
 * schemas), its own schema migrated. A URL that cannot be reached is refused, naming the host, never
 * the password.
 */
export async function addCluster(platform: Platform, input: AddClusterInput): Promise<ClusterSummary> {
  const name = clusterName(input.name);
  const weight = checkWeight(input.weight ?? 1);
  const url = storedUrl(input.url, platform.secrets);
  const directUrl = input.directUrl ? storedUrl(input.directUrl, platform.secrets) : undefined;
  const poolMode = input.poolMode ?? 'session';
  const shown = displayUrl(url, platform.secrets);
  const logical = await platform.clusters
    .probe(name, { url, directUrl, poolMode }, async (db) => {
      const { rows } = await db.query<{ version: string; wal_level: string }>(
        `SELECT current_setting('server_version_num') AS "version", current_setting('wal_level') AS "wal_level"`,
      );
      const row = rows[0];
      if (!row || Number(row.version) < 150000) throw new ValidationError(`Cluster ${name} runs PostgreSQL ${row?.version ?? '?'}: clusters need 15 or later`);
      await migrateClusterSchema(db);
      return row.wal_level === 'logical';
    })
    .catch((e: unknown) => {
      if (e instanceof ValidationError) throw e;
      const reason = e instanceof Error ? e.message : String(e);
      throw new ValidationError(`Cannot reach cluster ${name} at ${shown}: ${reason}`, { title: 'Cluster Unreachable' });
    });
  try {
    await platform.db.transaction(async (tx) => {
      // Added again with the same reference (env:/file:, as the chart's migrate Job does at every
      // upgrade): its weight and pool mode are updated. A literal URL is never equal to its stored form.
      const { rows } = await tx.query<{ url: string }>(
        `INSERT INTO quire.clusters ("name", "url", "direct_url", "pool_mode", "weight") VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT ("name") DO UPDATE SET "direct_url" = EXCLUDED."direct_url", "pool_mode" = EXCLUDED."pool_mode", "weight" = EXCLUDED."weight"
           WHERE quire.clusters."url" = EXCLUDED."url" AND quire.clusters."url" NOT LIKE 'enc:%'
         RETURNING "url"`,
        [name, url, directUrl ?? null, poolMode, weight],
      );
      if (rows.length === 0) throw new DuplicateEntryError(`Cluster ${name} already exists with another URL`);
      await publishInvalidation(tx, { topic: 'cluster', tenant: '' });
    });
  } catch (e) {
    if (pgErrorInfo(e)?.code === PG.uniqueViolation) throw new DuplicateEntryError(`Cluster ${name} already exists`);
    throw e;
  }
  await platform.clusters.refresh();
  const { rows } = await platform.db.query<{ state: ClusterState; n: string | number }>(
    `SELECT c."state", (SELECT count(*) FROM quire.tenants t WHERE t."cluster" = c."name") AS n FROM quire.clusters c WHERE c."name" = $1`,
    [name],
  );
  return { name, weight, state: rows[0]?.state ?? 'active', tenants: Number(rows[0]?.n ?? 0), url: shown, pool_mode: poolMode, logical_replication: logical };
}

/** Every cluster, `default` first, with how many tenants each holds. */
export async function listClusters(platform: Platform): Promise<ClusterSummary[]> {
  const [clusters, counts] = await Promise.all([
    readClusters(platform.db),
    platform.db.query<{ cluster: string; n: string | number }>(`SELECT "cluster", count(*) AS n FROM quire.tenants GROUP BY "cluster"`),
  ]);
  const tenants = new Map(counts.rows.map((r) => [r.cluster, Number(r.n)]));
  return clusters
    .sort((a, b) => (a.name === DEFAULT_CLUSTER ? -1 : b.name === DEFAULT_CLUSTER ? 1 : a.name < b.name ? -1 : 1))
    .map((c) => ({
      name: c.name,
      weight: c.weight,
      state: c.state,
      tenants: tenants.get(c.name) ?? 0,
      url: c.name === DEFAULT_CLUSTER ? 'DATABASE_URL' : displayUrl(c.url, platform.secrets),
      pool_mode: c.poolMode,
      logical_replication: null,
    }));
}

/** Drains a cluster (no new tenant or move lands there; its tenants stay served), or makes it active again. */
export async function setClusterState(platform: Platform, input: string, state: ClusterState): Promise<void> {
  const name = clusterName(input);
  await platform.db.transaction(async (tx) => {
    const { rowCount } = await tx.query(`UPDATE quire.clusters SET "state" = $2 WHERE "name" = $1`, [name, state]);
    if (rowCount === 0) throw new DoesNotExistError(`Cluster ${name} not found`);
    await publishInvalidation(tx, { topic: 'cluster', tenant: '' });
  });
  await platform.clusters.refresh();
}

/** Changes a cluster's weight (its share of new tenants). */
export async function setClusterWeight(platform: Platform, input: string, weight: number): Promise<void> {
  const name = clusterName(input);
  checkWeight(weight);
  const { rowCount } = await platform.db.query(`UPDATE quire.clusters SET "weight" = $2 WHERE "name" = $1`, [name, weight]);
  if (rowCount === 0) throw new DoesNotExistError(`Cluster ${name} not found`);
}
