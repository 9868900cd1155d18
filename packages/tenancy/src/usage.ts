import type { Database, Queryable } from '@quire/db';
import { ident } from '@quire/db';
import { DEFAULT_CLUSTER, type Clusters } from './clusters';

/**
 * Usage metering, per tenant: what its requests cost (count, request time, time waiting on
 * Postgres: `quire.tenant_usage_daily`, a row per tenant per UTC day) and what it keeps (database
 * size, file storage, users: `quire.tenant_usage`, measured every USAGE_MEASURE_MS). Requests are
 * counted in memory and added to the table by one statement per process every USAGE_FLUSH_MS,
 * never a write per request.
 */

export async function createUsageTables(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE quire.tenant_usage (
    "tenant" text PRIMARY KEY REFERENCES quire.tenants ("name") ON DELETE CASCADE,
    "database_bytes" bigint,
    "file_bytes" bigint,
    "users" integer,
    "measured_at" timestamptz NOT NULL DEFAULT now()
  )`);
  await q.query(`CREATE TABLE quire.tenant_usage_daily (
    "tenant" text NOT NULL REFERENCES quire.tenants ("name") ON DELETE CASCADE,
    "day" date NOT NULL,
    "requests" bigint NOT NULL DEFAULT 0,
    "request_seconds" double precision NOT NULL DEFAULT 0,
    "db_seconds" double precision NOT NULL DEFAULT 0,
    PRIMARY KEY ("tenant", "day")
  )`);
}

/** What a tenant keeps, as last measured. */
export interface TenantMeasure {
  databaseBytes: number;
  fileBytes: number;
  users: number;
  measuredAt: string;
}

interface Tally {
  requests: number;
  requestMs: number;
  dbMs: number;
}

/** Hears every request and database time the meter counts (per-tenant Prometheus series). */
export interface UsageObserver {
  request(tenant: string, ms: number): void;
  database(tenant: string, ms: number): void;
}

/** Counted since the last flush, per tenant; past this many tenants a flush is due at once. */
const MAX_TALLIES = 10_000;

/**
 * One process's request counts and times per tenant, added to `quire.tenant_usage_daily` every
 * `flushMs` in one statement. A failed flush keeps its counts for the next one.
 */
export class UsageMeter {
  private tallies = new Map<string, Tally>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private observer: UsageObserver | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Also tells `observer` of every time counted. */
  observe(observer: UsageObserver): void {
    this.observer = observer;
  }

  start(flushMs: number): void {
    this.timer ??= setInterval(() => void this.flush(), flushMs).unref();
  }

  /** A request of `tenant` answered after `ms` (from its admission to its answer). */
  request(tenant: string, ms: number): void {
    const t = this.tally(tenant);
    t.requests++;
    t.requestMs += ms;
    this.observer?.request(tenant, ms);
  }

  /** `ms` spent by `tenant` waiting on Postgres (a statement, or a transaction from BEGIN to COMMIT). */
  database(tenant: string, ms: number): void {
    this.tally(tenant).dbMs += ms;
    this.observer?.database(tenant, ms);
  }

  /** What this process counted and has not added yet (tests, the usage command run in-process). */
  pending(tenant: string): Readonly<Tally> | undefined {
    return this.tallies.get(tenant);
  }

  private tally(tenant: string): Tally {
    let t = this.tallies.get(tenant);
    if (!t) {
      this.tallies.set(tenant, (t = { requests: 0, requestMs: 0, dbMs: 0 }));
      if (this.tallies.size > MAX_TALLIES) void this.flush();
    }
    return t;
  }

  /** Adds what was counted to the day's rows (dropped tenants' counts are let go). */
  flush(): Promise<void> {
    this.flushing ??= this.flushNow().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async flushNow(): Promise<void> {
    if (this.tallies.size === 0) return;
    const batch = this.tallies;
    this.tallies = new Map();
    const names = [...batch.keys()];
    const rows = [...batch.values()];
    try {
      await this.db.query(
        `INSERT INTO quire.tenant_usage_daily AS d ("tenant", "day", "requests", "request_seconds", "db_seconds")
         SELECT u.tenant, (now() AT TIME ZONE 'UTC')::date, u.requests, u.request_ms / 1000, u.db_ms / 1000
         FROM unnest($1::text[], $2::bigint[], $3::float8[], $4::float8[]) AS u(tenant, requests, request_ms, db_ms)
         JOIN quire.tenants t ON t."name" = u.tenant
         ON CONFLICT ("tenant", "day") DO UPDATE SET
           "requests" = d."requests" + excluded."requests",
           "request_seconds" = d."request_seconds" + excluded."request_seconds",
           "db_seconds" = d."db_seconds" + excluded."db_seconds"`,
        [names, rows.map((r) => r.requests), rows.map((r) => r.requestMs), rows.map((r) => r.dbMs)],
      );
    } catch (err) {
      // Kept for the next flush, added to what comes meanwhile.
      for (const [name, t] of batch) {
        const now = this.tally(name);
        now.requests += t.requests;
        now.requestMs += t.requestMs;
        now.dbMs += t.dbMs;
      }
      this.onError(err);
    }
  }

  /** Stops the timer and adds what is left. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

/** Tenants claimed and measured at a time: their sizes come from one catalog query per cluster (a scan of its pg_class). */
const MEASURE_BATCH = 200;

/** A tenant to measure: where its schema is (its cluster; `default`, the platform database, when not said). */
export interface TenantToMeasure {
  name: string;
  schema: string;
  cluster?: string | undefined;
}

/** The clusters' databases tenants are measured on (the platform's Clusters). */
export type ClusterDatabases = Pick<Clusters, 'database' | 'ensureKnown'>;

/**
 * Claims up to `limit` tenants to measure: those never measured, and those measured over `maxAgeMs`
 * ago that have had requests since the day of their last measure (an idle tenant keeps what it had).
 * Every process may call it: a tenant claimed by one (its measured_at moved to now) is not due for
 * the others, so the work is shared without a leader.
 */
async function claimDue(db: Queryable, maxAgeMs: number, limit: number): Promise<TenantToMeasure[]> {
  const { rows } = await db.query<{ name: string; schema: string; cluster: string }>(
    `WITH due AS (
       SELECT t."name", t."schema", t."cluster" FROM quire.tenants t LEFT JOIN quire.tenant_usage u ON u."tenant" = t."name"
       WHERE u."tenant" IS NULL
          OR (u."measured_at" < now() - make_interval(secs => $1::float8 / 1000)
              AND EXISTS (SELECT 1 FROM quire.tenant_usage_daily d
                          WHERE d."tenant" = t."name" AND d."day" >= (u."measured_at" AT TIME ZONE 'UTC')::date))
       ORDER BY u."measured_at" NULLS FIRST LIMIT $2
     ), claimed AS (
       INSERT INTO quire.tenant_usage AS u ("tenant", "measured_at") SELECT "name", now() FROM due
       ON CONFLICT ("tenant") DO UPDATE SET "measured_at" = excluded."measured_at"
       WHERE u."measured_at" < now() - make_interval(secs => $1::float8 / 1000)
       RETURNING u."tenant"
     )
     SELECT due."name", due."schema", due."cluster" FROM due JOIN claimed ON claimed."tenant" = due."name"`,
    [maxAgeMs, limit],
  );
  return rows;
}

/**
 * Sizes of tenants' schemas (tables, their indexes and TOAST), by schema, from Postgres's own page
 * counts (pg_class.relpages, kept by autovacuum and ANALYZE). Not pg_total_relation_size: that opens
 * every relation (a lock each, thousands per batch, waiting behind any DDL) and stats its files.
 */
async function schemaSizes(db: Queryable, schemas: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ schema: string; bytes: number | string }>(
    `SELECT n.nspname AS "schema",
            (coalesce(sum(c.relpages::bigint + coalesce(toast.relpages, 0)), 0) * current_setting('block_size')::bigint)::bigint AS bytes
     FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid
     LEFT JOIN pg_class toast ON toast.oid = c.reltoastrelid
     WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'm', 'p', 'i')
     GROUP BY n.nspname`,
    [schemas],
  );
  return new Map(rows.map((r) => [r.schema, Number(r.bytes)]));
}

/** SQL for a tenant's stored file bytes: the sizes of its File documents. */
export function fileBytesSql(schema: string): string {
  return `SELECT coalesce(sum("file_size"), 0)::bigint FROM ${ident(schema)}."tabFile"`;
}

/** SQL for the users a plan counts: enabled, besides Administrator and Guest. */
export function countedUsersSql(schema: string): string {
  return `SELECT count(*) FROM ${ident(schema)}."tabUser" WHERE "enabled" = 1 AND "name" NOT IN ('Administrator', 'Guest')`;
}

/** A tenant's stored file bytes and the users its plan counts, in one round trip. */
export async function countTenantHoldings(db: Queryable, schema: string): Promise<{ fileBytes: number; users: number }> {
  const { rows } = await db.query<{ file_bytes: number | string; users: number | string }>(
    `SELECT (${fileBytesSql(schema)}) AS file_bytes, (${countedUsersSql(schema)}) AS users`,
  );
  const row = rows[0];
  return { fileBytes: Number(row?.file_bytes ?? 0), users: Number(row?.users ?? 0) };
}

/**
 * Measures `tenants` now and records it in the platform database `db` (quire.tenant_usage); returns
 * what was measured by tenant name. Each tenant is measured on its cluster's database (`clusters`;
 * without them, every tenant must be on the platform database): a batch's sizes in one catalog
 * query per cluster. A cluster that cannot be reached leaves its tenants unmeasured; the others are
 * measured, then its error is thrown.
 */
export async function measureTenants(db: Queryable, tenants: readonly TenantToMeasure[], clusters?: ClusterDatabases): Promise<Map<string, TenantMeasure>> {
  const out = new Map<string, TenantMeasure>();
  const clusterOf = (t: TenantToMeasure) => t.cluster ?? DEFAULT_CLUSTER;
  // A cluster registered since this process last read the registry is read first.
  await clusters?.ensureKnown(new Set(tenants.map(clusterOf)));
  const failures: unknown[] = [];
  for (let i = 0; i < tenants.length; i += MEASURE_BATCH) {
    const byCluster = new Map<string, TenantToMeasure[]>();
    for (const t of tenants.slice(i, i + MEASURE_BATCH)) {
      const onCluster = byCluster.get(clusterOf(t));
      if (onCluster) onCluster.push(t);
      else byCluster.set(clusterOf(t), [t]);
    }
    for (const [cluster, batch] of byCluster) {
      try {
        await measureOnCluster(db, clusterDatabase(db, cluster, clusters), batch, out);
      } catch (err) {
        failures.push(err);
      }
    }
  }
  if (failures.length) throw failures.length === 1 ? failures[0] : new AggregateError(failures, 'measuring tenants failed on several clusters');
  return out;
}

function clusterDatabase(platformDb: Queryable, cluster: string, clusters: ClusterDatabases | undefined): Queryable {
  if (clusters) return clusters.database(cluster);
  if (cluster === DEFAULT_CLUSTER) return platformDb;
  throw new Error(`tenants on cluster ${cluster} are measured with the platform's clusters`);
}

/** Measures tenants of one cluster (`tenantDb`) and records what was measured in the platform database. */
async function measureOnCluster(platformDb: Queryable, tenantDb: Queryable, batch: readonly TenantToMeasure[], out: Map<string, TenantMeasure>): Promise<void> {
  const sizes = await schemaSizes(
    tenantDb,
    batch.map((t) => t.schema),
  );
  for (const t of batch) {
    // A schema gone meanwhile (a tenant dropped or moved) is not measured.
    const databaseBytes = sizes.get(t.schema);
    if (databaseBytes === undefined) continue;
    const holdings = await countTenantHoldings(tenantDb, t.schema).catch(() => undefined);
    if (!holdings) continue;
    const { rows } = await platformDb.query<{ measured_at: string }>(
      `INSERT INTO quire.tenant_usage ("tenant", "database_bytes", "file_bytes", "users", "measured_at")
       SELECT $1, $2, $3, $4, now() WHERE EXISTS (SELECT 1 FROM quire.tenants WHERE "name" = $1)
       ON CONFLICT ("tenant") DO UPDATE SET "database_bytes" = $2, "file_bytes" = $3, "users" = $4, "measured_at" = now()
       RETURNING "measured_at"::text`,
      [t.name, databaseBytes, holdings.fileBytes, holdings.users],
    );
    if (rows[0]) out.set(t.name, { databaseBytes, ...holdings, measuredAt: rows[0].measured_at });
  }
}

/**
 * Measures the tenants that are due, a batch at a time, in every process that meters (shared
 * through claimDue). Processes read the new sizes with the registry (TenantDirectory.refresh), so a
 * tenant that went over its plan is seen everywhere within CACHE_REFRESH_INTERVAL_MS.
 */
export class UsageSampler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    /** The platform database: which tenants are due, and what was measured. */
    private readonly db: Database,
    /** Where each tenant's schema is measured. */
    private readonly clusters: ClusterDatabases,
    private readonly everyMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    // Checked at a tenth of the period (at most every 30 s), so a tenant is never measured much later than due.
    this.timer ??= setInterval(() => void this.runOnce(), Math.min(30_000, Math.max(100, this.everyMs / 10))).unref();
  }

  runOnce(): Promise<void> {
    this.running ??= (async () => {
      try {
        for (;;) {
          const due = await claimDue(this.db, this.everyMs, MEASURE_BATCH);
          if (due.length === 0) return;
          await measureTenants(this.db, due, this.clusters);
          if (due.length < MEASURE_BATCH) return;
        }
      } catch (err) {
        this.onError(err);
      }
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

/** A tenant's usage as `quire tenant usage` shows it. */
export interface TenantUsage {
  tenant: string;
  /** Today (UTC): requests, request seconds, seconds waiting on Postgres. */
  today: { day: string; requests: number; requestSeconds: number; dbSeconds: number };
  /** The last 30 days, today included. */
  last30Days: { requests: number; requestSeconds: number; dbSeconds: number };
  /** What it keeps, as last measured (null before the first measure). */
  databaseBytes: number | null;
  fileBytes: number | null;
  users: number | null;
  measuredAt: string | null;
}

/** Usage of the named tenants (all when none), from the platform's tables. */
export async function readUsage(db: Queryable, names?: readonly string[]): Promise<TenantUsage[]> {
  const { rows } = await db.query<{
    tenant: string;
    day: string;
    today_requests: number | string;
    today_request_seconds: number | string;
    today_db_seconds: number | string;
    requests: number | string;
    request_seconds: number | string;
    db_seconds: number | string;
    database_bytes: number | string | null;
    file_bytes: number | string | null;
    users: number | string | null;
    measured_at: string | null;
  }>(
    `SELECT t."name" AS tenant, (now() AT TIME ZONE 'UTC')::date::text AS day,
            coalesce(sum(d."requests") FILTER (WHERE d."day" = (now() AT TIME ZONE 'UTC')::date), 0) AS today_requests,
            coalesce(sum(d."request_seconds") FILTER (WHERE d."day" = (now() AT TIME ZONE 'UTC')::date), 0) AS today_request_seconds,
            coalesce(sum(d."db_seconds") FILTER (WHERE d."day" = (now() AT TIME ZONE 'UTC')::date), 0) AS today_db_seconds,
            coalesce(sum(d."requests"), 0) AS requests, coalesce(sum(d."request_seconds"), 0) AS request_seconds,
            coalesce(sum(d."db_seconds"), 0) AS db_seconds,
            u."database_bytes", u."file_bytes", u."users",
            CASE WHEN u."database_bytes" IS NULL THEN NULL ELSE to_char(u."measured_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') END AS measured_at
     FROM quire.tenants t
     LEFT JOIN quire.tenant_usage_daily d ON d."tenant" = t."name" AND d."day" > (now() AT TIME ZONE 'UTC')::date - 30
     LEFT JOIN quire.tenant_usage u ON u."tenant" = t."name"
     WHERE $1::text[] IS NULL OR t."name" = ANY($1::text[])
     GROUP BY t."name", u."tenant"
     ORDER BY t."name"`,
    [names && names.length ? names : null],
  );
  const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
  // Sums come back as numbers or, for bigint and numeric, as text (the embedded driver and pg differ).
  const round = (s: number | string): number => Math.round(Number(s) * 1000) / 1000;
  return rows.map((r) => ({
    tenant: r.tenant,
    today: { day: r.day, requests: Number(r.today_requests), requestSeconds: round(r.today_request_seconds), dbSeconds: round(r.today_db_seconds) },
    last30Days: { requests: Number(r.requests), requestSeconds: round(r.request_seconds), dbSeconds: round(r.db_seconds) },
    databaseBytes: num(r.database_bytes),
    fileBytes: num(r.file_bytes),
    users: num(r.users),
    measuredAt: r.measured_at,
  }));
}
