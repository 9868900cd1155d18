import fs from 'node:fs';
import type { SecretBox } from '@quire/auth';
import { runMigrations, type Database, type Migration, type Queryable, type TenantDatabases } from '@quire/db';
import { ValidationError } from '@quire/errors';
import { createFairClaimIndexes, createOutboxTable } from '@quire/webhooks';
import { createJobsTable, createScheduleTable, createWorkersTable } from '@quire/jobs';
import { createMoveObjects } from './move';
import { createSparesTable, createTemplatesTable } from './release-schemas';

/**
 * The Postgres clusters tenants' schemas live on. The platform database (DATABASE_URL: tenants,
 * domains, releases) stays one; each tenant's schema is on the cluster `quire.tenants.cluster`
 * names. The platform's own database is the cluster `default`, so a deployment that registers no
 * other changes nothing. A process opens a cluster's pool the first time one of its tenants is
 * asked for, and closes it (and its listener) once none has been for `idleMs`: idle clusters cost
 * no connections.
 */

export const DEFAULT_CLUSTER = 'default';

export type ClusterState = 'active' | 'draining';

/** How a cluster is reached, as stored: never a password in clear. */
export type StoredUrl = string;

export interface ClusterRecord {
  name: string;
  /** Shares of new tenants: weights 1 and 3 take new tenants about 1:3. */
  weight: number;
  /** `draining`: no new tenant lands there and no move goes to it; its tenants stay served. */
  state: ClusterState;
  /** The URL as stored: `platform:` (DATABASE_URL), `env:NAME`, `file:/path`, or `enc:…` (a URL given literally, encrypted). */
  url: StoredUrl;
  directUrl: StoredUrl | null;
  poolMode: 'session' | 'transaction';
}

/** What opening a cluster's pool needs. */
export interface ClusterConnection {
  url: string;
  /** For LISTEN when `url` goes through a transaction pooler. */
  directUrl?: string | undefined;
  poolMode: 'session' | 'transaction';
}

export type OpenCluster = (name: string, connection: ClusterConnection) => Database;

export const CLUSTER_NAME_RE = /^[a-z](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

/** A cluster's name as stored, or a ValidationError saying what a name may be. */
export function clusterName(input: string): string {
  const name = input.trim().toLowerCase();
  if (!CLUSTER_NAME_RE.test(name)) {
    throw new ValidationError(`Invalid cluster name ${JSON.stringify(input)}: lower-case letters, digits and hyphens, starting with a letter, at most 40`);
  }
  return name;
}

/**
 * How a URL given to `quire cluster add` is stored: `env:NAME` and `file:/path` as they are (read
 * when the pool opens: a Kubernetes Secret as an environment variable or a mounted file), a literal
 * postgres:// URL encrypted with the platform's key.
 */
export function storedUrl(input: string, secrets: SecretBox): StoredUrl {
  const value = input.trim();
  if (/^env:[A-Za-z_][A-Za-z0-9_]*$/.test(value) || /^file:\/.+/.test(value)) return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError('A cluster URL is postgres://user:password@host:port/database, env:VARIABLE or file:/path/to/secret');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ValidationError('A cluster URL is postgres://user:password@host:port/database, env:VARIABLE or file:/path/to/secret');
  }
  return `enc:${secrets.encrypt(value)}`;
}

/** The URL a stored one stands for; `platformUrl` for `platform:`. */
export function resolveUrl(stored: StoredUrl, secrets: SecretBox, platformUrl: string | undefined): string {
  if (stored === 'platform:') {
    if (!platformUrl) throw new Error('the default cluster is the platform database, and DATABASE_URL is not set');
    return platformUrl;
  }
  if (stored.startsWith('env:')) {
    const value = process.env[stored.slice(4)];
    if (!value) throw new Error(`the environment variable ${stored.slice(4)} a cluster's URL is read from is not set`);
    return value.trim();
  }
  if (stored.startsWith('file:')) return fs.readFileSync(stored.slice(5), 'utf8').trim();
  if (stored.startsWith('enc:')) return secrets.decrypt(stored.slice(4));
  throw new Error('a cluster URL is stored in a form this build does not know');
}

/** A URL to show: its password never printed back; references shown as they are. */
export function displayUrl(stored: StoredUrl, secrets: SecretBox): string {
  if (!stored.startsWith('enc:')) return stored;
  try {
    const url = new URL(secrets.decrypt(stored.slice(4)));
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(encrypted with another key)';
  }
}

interface ClusterRow {
  name: string;
  weight: number | string;
  state: ClusterState;
  url: string;
  direct_url: string | null;
  pool_mode: 'session' | 'transaction';
}

function fromRow(r: ClusterRow): ClusterRecord {
  return { name: r.name, weight: Number(r.weight), state: r.state, url: r.url, directUrl: r.direct_url, poolMode: r.pool_mode };
}

export async function readClusters(q: Queryable): Promise<ClusterRecord[]> {
  const { rows } = await q.query<ClusterRow>(`SELECT "name", "weight", "state", "url", "direct_url", "pool_mode" FROM quire.clusters ORDER BY "name"`);
  return rows.map(fromRow);
}

/**
 * The schema every cluster but the platform's own keeps beside its tenants' schemas: what a
 * tenant's transaction writes besides its own tables (the webhook outbox: an event commits with
 * its change), and the release templates tenants there are copied from. The platform database has
 * these in its own `quire` schema already.
 */
export const CLUSTER_SCHEMA = 'quire';

export const clusterMigrations: readonly Migration[] = [
  {
    id: 'cluster:0001_outbox_and_templates',
    async up(q) {
      await createOutboxTable(q, { tenantReference: false });
      await createTemplatesTable(q);
      await createSparesTable(q);
    },
  },
  {
    /** What a move of a tenant to or from here uses (move.ts). */
    id: 'cluster:0002_moves',
    async up(q) {
      await createMoveObjects(q);
    },
  },
  {
    /** Background jobs of the tenants here (@quire/jobs). */
    id: 'cluster:0003_jobs',
    async up(q) {
      await createJobsTable(q);
      await createScheduleTable(q);
      await createWorkersTable(q);
    },
  },
  {
    /** Webhook events claimed fairly between tenants (@quire/webhooks events.ts). */
    id: 'cluster:0004_webhook_fair_claim',
    async up(q) {
      await createFairClaimIndexes(q);
    },
  },
];

/** Brings a (non-default) cluster's own schema to this build (idempotent). */
export function migrateClusterSchema(db: Database): Promise<string[]> {
  return runMigrations(db, CLUSTER_SCHEMA, clusterMigrations, { lock: db.supportsAdvisoryLocks });
}

export interface ClustersOptions {
  /** The platform database: the `default` cluster. */
  platformDb: Database;
  secrets: SecretBox;
  /** DATABASE_URL (what `platform:` stands for). */
  platformUrl?: string | undefined;
  /** DATABASE_DIRECT_URL, when DATABASE_URL goes through a transaction pooler. */
  platformDirectUrl?: string | undefined;
  /** Opens a pool to another cluster; without it (the embedded database) only `default` exists. */
  open?: OpenCluster | undefined;
  /** A cluster none of whose tenants was asked for this long is closed (its pool and listener). */
  idleMs?: number;
  /** Told when a cluster's pool opens (to listen there) and closes. */
  onOpen?: (name: string, db: Database) => void;
  onClose?: (name: string) => void;
}

interface Open {
  db: Database;
  lastUsed: number;
}

/**
 * This process's clusters: the registry as last read, and a pool per cluster in use. `of(tenant)`
 * is on every request's path: a map read and a timestamp.
 */
export class Clusters implements TenantDatabases {
  private records = new Map<string, ClusterRecord>();
  private readonly open = new Map<string, Open>();
  private clusterOfTenant: (name: string) => string | undefined = () => undefined;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly options: ClustersOptions) {}

  /** Where tenants are found: the directory's cluster for a tenant name. */
  locate(clusterOfTenant: (name: string) => string | undefined): void {
    this.clusterOfTenant = clusterOfTenant;
  }

  /** Re-reads the registry (one read at a time; a call during a read waits for it). */
  refresh(): Promise<void> {
    this.refreshing ??= readClusters(this.options.platformDb)
      .then((records) => {
        this.records = new Map(records.map((r) => [r.name, r]));
      })
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Reads the registry again if one of `names` is not in it (a cluster added since the last read). */
  async ensureKnown(names: Iterable<string>): Promise<void> {
    for (const name of names) {
      if (name !== DEFAULT_CLUSTER && !this.records.has(name)) {
        await this.refresh();
        return;
      }
    }
  }

  list(): ClusterRecord[] {
    return [...this.records.values()];
  }

  get(name: string): ClusterRecord | undefined {
    return this.records.get(name);
  }

  /** The database holding `tenant`'s schema. */
  of(tenant: { readonly name: string }): Database {
    return this.database(this.clusterOfTenant(tenant.name) ?? DEFAULT_CLUSTER);
  }

  /** The cluster's database, its pool opened now if it is not open. */
  database(name: string): Database {
    if (name === DEFAULT_CLUSTER) return this.options.platformDb;
    const open = this.open.get(name);
    if (open) {
      open.lastUsed = Date.now();
      return open.db;
    }
    const record = this.records.get(name);
    if (!record) throw new Error(`cluster ${name} is not registered (quire cluster list)`);
    if (!this.options.open) throw new Error(`cluster ${name} cannot be reached from the embedded database`);
    const db = this.options.open(name, this.connectionOf(record));
    this.open.set(name, { db, lastUsed: Date.now() });
    this.options.onOpen?.(name, db);
    return db;
  }

  /**
   * Runs `fn` on a pool of its own to a cluster not registered yet (or to check one), closed after:
   * `quire cluster add` refuses a URL that cannot be reached before storing it.
   */
  async probe<T>(
    name: string,
    stored: { url: StoredUrl; directUrl?: StoredUrl | undefined; poolMode: 'session' | 'transaction' },
    fn: (db: Database) => Promise<T>,
  ): Promise<T> {
    if (!this.options.open)
      throw new ValidationError('Clusters need Postgres: the embedded database holds every tenant itself', { title: 'Clusters Unavailable' });
    const db = this.options.open(name, this.connectionOf(stored));
    try {
      return await fn(db);
    } finally {
      await db.close(1000).catch(() => undefined);
    }
  }

  /**
   * The URL another Postgres server reaches this cluster at for logical replication (a move's
   * subscription): its direct URL when it has one (a pooler cannot carry replication).
   */
  replicationUrl(name: string): string {
    const { secrets, platformUrl, platformDirectUrl } = this.options;
    if (name === DEFAULT_CLUSTER) return resolveUrl('platform:', secrets, platformDirectUrl ?? platformUrl);
    const record = this.records.get(name);
    if (!record) throw new Error(`cluster ${name} is not registered (quire cluster list)`);
    return resolveUrl(record.directUrl ?? record.url, secrets, platformUrl);
  }

  /** What opening a pool to a cluster stored as `stored` needs: its URLs resolved. */
  private connectionOf(stored: { url: StoredUrl; directUrl?: StoredUrl | null | undefined; poolMode: 'session' | 'transaction' }): ClusterConnection {
    const { secrets, platformUrl } = this.options;
    return {
      url: resolveUrl(stored.url, secrets, platformUrl),
      directUrl: stored.directUrl ? resolveUrl(stored.directUrl, secrets, platformUrl) : undefined,
      poolMode: stored.poolMode,
    };
  }

  /** The clusters whose pools are open now, with their databases (default first). */
  opened(): Array<[string, Database]> {
    return [[DEFAULT_CLUSTER, this.options.platformDb], ...[...this.open].map(([name, o]): [string, Database] => [name, o.db])];
  }

  /** Closes the pools of clusters unused for `idleMs` (called periodically). */
  async closeIdle(now = Date.now()): Promise<void> {
    const idleMs = this.options.idleMs ?? 5 * 60_000;
    for (const [name, o] of this.open) {
      if (now - o.lastUsed < idleMs) continue;
      this.open.delete(name);
      this.options.onClose?.(name);
      await o.db.close(1000).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const open = [...this.open];
    this.open.clear();
    for (const [name, o] of open) {
      this.options.onClose?.(name);
      await o.db.close(1000).catch(() => undefined);
    }
  }
}

/**
 * The cluster a new tenant goes to: the active cluster with the fewest tenants per unit of weight,
 * then the smallest database (bytes per weight), then by name, so the choice is the same wherever
 * it is made.
 */
export async function placeTenant(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ name: string }>(
    `SELECT c."name"
     FROM quire.clusters c
     LEFT JOIN (SELECT t."cluster", count(*) AS n, COALESCE(sum(u."database_bytes"), 0) AS bytes
                FROM quire.tenants t LEFT JOIN quire.tenant_usage u ON u."tenant" = t."name"
                GROUP BY t."cluster") load ON load."cluster" = c."name"
     WHERE c."state" = 'active'
     ORDER BY COALESCE(load.n, 0)::float8 / c."weight", COALESCE(load.bytes, 0)::float8 / c."weight", c."name" COLLATE "C"
     LIMIT 1`,
  );
  const chosen = rows[0];
  if (!chosen) throw new ValidationError('Every cluster is draining: add one or undrain one before creating tenants', { title: 'No Cluster Available' });
  return chosen.name;
}
