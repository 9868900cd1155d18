import { withAdvisoryLock, type Database, type Transaction } from '@quire/db';
import { FrappeError } from '@quire/errors';
import { migrateTenant, type InstallServices } from './install';
import { Platform } from './platform';
import { recordTenantRelease, releaseOf } from './release';
import { dropStaleSchemas } from './template';
import { DEFAULT_CLUSTER, migrateClusterSchema } from './clusters';

/**
 * `quire migrate` for a rolling upgrade: one run at a time (a global advisory lock; a second run
 * waits, then finds nothing to do), the platform schema first, then every tenant not yet recorded
 * at this build's release, each in its own transaction together with its record, so a run killed
 * halfway keeps the tenants it finished and the next run does only the rest. The release is marked
 * complete once every tenant is at it; that is what this build's processes wait for to be ready.
 * Every cluster is migrated: its own schema (the outbox, templates) after the platform's, then its
 * tenants with the others. A tenant on another cluster commits there first and is recorded in the
 * platform database after: a run killed between the two finds it up to date next time.
 */

export const MIGRATE_LOCK = 'quire:migrate';

export type TenantMigrationStatus = 'migrated' | 'up to date' | 'already at this release';

export interface TenantMigrationOutcome {
  status: TenantMigrationStatus;
  /** Tenant migrations applied and standard DocTypes inserted or updated. */
  changes: string[];
}

export interface MigrationFailure {
  tenant: string;
  error: string;
}

export interface MigrationReport {
  release: string;
  /** Platform migrations applied by this run. */
  platform: string[];
  /** Every tenant this run saw, in the order it went through them. */
  tenants: Record<string, TenantMigrationOutcome>;
  /** The tenant that failed; the run stopped there and the release is not complete. */
  failed?: MigrationFailure;
  /** The schemas of older releases' tenant templates this run dropped. */
  droppedTemplates?: string[];
  /** The schemas of older releases' spare tenant schemas this run dropped. */
  droppedSpares?: string[];
  /** Per cluster other than `default`, the migrations of its own schema this run applied. */
  clusters?: Record<string, string[]>;
}

export interface MigrateReleaseOptions {
  /** Called once the platform schema is migrated (to print progress). */
  onPlatform?: (applied: string[]) => void;
  /** Called once each other cluster's own schema is migrated. */
  onCluster?: (cluster: string, applied: string[]) => void;
  /** Called after each tenant's transaction committed (or found it already done). */
  onTenant?: (tenant: string, outcome: TenantMigrationOutcome) => void;
}

/** What migrating needs of a platform: its database, apps, and the services installing uses. */
export type MigrationTarget = Pick<Platform, 'db' | 'apps' | 'clusters'> & Partial<Pick<Platform, 'spares'>> & Omit<InstallServices, 'lockMigrations'>;

/**
 * Brings the platform schema and every tenant to this build's release. A tenant's failure stops
 * the run and is returned as `failed` (its transaction rolled back; the tenants before it stay
 * recorded); a failure of the platform step throws.
 */
export async function migrateRelease(target: MigrationTarget, options: MigrateReleaseOptions = {}): Promise<MigrationReport> {
  const { db, apps } = target;
  const release = releaseOf(apps);
  return withAdvisoryLock(db, MIGRATE_LOCK, async () => {
    const platform = await Platform.migratePlatform(db);
    options.onPlatform?.(platform);
    await target.clusters.refresh();
    const clusters: Record<string, string[]> = {};
    for (const cluster of target.clusters.list()) {
      if (cluster.name === DEFAULT_CLUSTER) continue;
      clusters[cluster.name] = await migrateClusterSchema(target.clusters.database(cluster.name));
      options.onCluster?.(cluster.name, clusters[cluster.name] ?? []);
    }
    await db.query(`INSERT INTO quire.releases ("release") VALUES ($1) ON CONFLICT DO NOTHING`, [release]);
    const report: MigrationReport = { release, platform, tenants: {}, ...(Object.keys(clusters).length > 0 ? { clusters } : {}) };
    const seen = new Set<string>();
    const unseenTenants = async () => (await tenantsByName(db, release)).filter((t) => !seen.has(t.name));
    // Tenants made meanwhile by a process of the previous release are not at this one: look again
    // until a pass finds none new, so the release is never marked complete past one of them.
    let complete: boolean;
    for (;;) {
      const tenants = await unseenTenants();
      if (tenants.length === 0) {
        complete = await markReleaseComplete(db, release);
        if (complete) break;
        // One appeared between the listing and the marking: go round for it (else a later run completes the release).
        if ((await unseenTenants()).length === 0) break;
        continue;
      }
      for (const tenant of tenants) {
        seen.add(tenant.name);
        let outcome: TenantMigrationOutcome | undefined;
        try {
          outcome = tenant.recorded ? { status: 'already at this release', changes: [] } : await migrateOneTenant(target, tenant.name, release);
        } catch (e) {
          report.failed = { tenant: tenant.name, error: e instanceof Error ? e.message : String(e) };
          return report;
        }
        // Undefined: the tenant was dropped since it was listed.
        if (outcome === undefined) continue;
        report.tenants[tenant.name] = outcome;
        options.onTenant?.(tenant.name, outcome);
      }
    }
    if (complete) {
      // No tenant is provisioned from an older release's template or spares any more. Templates
      // first: dropping one waits for a spare being copied from it, which the second step then sees.
      const dropped = async (cluster: Database) =>
        cluster.transaction(async (tx) => [await dropStaleSchemas(tx, 'tenant_templates', release), await dropStaleSchemas(tx, 'tenant_spares', release)]);
      const [templates = [], spares = []] = await dropped(db);
      for (const cluster of target.clusters.list()) {
        if (cluster.name === DEFAULT_CLUSTER) continue;
        const [t = [], s = []] = await dropped(target.clusters.database(cluster.name));
        templates.push(...t);
        spares.push(...s);
      }
      if (templates.length > 0) report.droppedTemplates = templates;
      if (spares.length > 0) report.droppedSpares = spares;
      // The release's first tenants take spares too (made in the background; closing waits for them).
      target.spares?.replenish(target);
    }
    return report;
  });
}

/** Marks the release complete if every tenant is recorded at it; whether it is complete now. */
async function markReleaseComplete(db: Database, release: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE quire.releases SET "completed_at" = COALESCE("completed_at", now()) WHERE "release" = $1
     AND NOT EXISTS (SELECT 1 FROM quire.tenants t WHERE NOT EXISTS (
       SELECT 1 FROM quire.tenant_releases r WHERE r."tenant" = t."name" AND r."release" = $1))`,
    [release],
  );
  return rowCount > 0;
}

interface ListedTenant {
  name: string;
  recorded: boolean;
}

/** Every tenant, in byte order of its name, and whether it is recorded at `release`. */
async function tenantsByName(db: Database, release: string): Promise<ListedTenant[]> {
  const { rows } = await db.query<ListedTenant>(
    `SELECT t."name", (r."tenant" IS NOT NULL) AS "recorded"
     FROM quire.tenants t LEFT JOIN quire.tenant_releases r ON r."tenant" = t."name" AND r."release" = $1
     ORDER BY t."name" COLLATE "C"`,
    [release],
  );
  return rows;
}

/** One tenant's migration and its record, in one transaction; undefined if the tenant is gone. */
function migrateOneTenant(target: MigrationTarget, name: string, release: string): Promise<TenantMigrationOutcome | undefined> {
  const { db, apps, changes, files, secrets } = target;
  return db.transaction(async (tx) => {
    // Holding the tenant row keeps `tenant drop` (and a move's switch) from changing the schema under the migration.
    const { rows } = await tx.query<{ schema: string; cluster: string; recorded: boolean }>(
      `SELECT t."schema", t."cluster", EXISTS (SELECT 1 FROM quire.tenant_releases r WHERE r."tenant" = t."name" AND r."release" = $2) AS "recorded"
       FROM quire.tenants t WHERE t."name" = $1 FOR KEY SHARE`,
      [name, release],
    );
    const row = rows[0];
    if (!row) return undefined;
    if (row.recorded) return { status: 'already at this release', changes: [] };
    const tenant = { name, schema: row.schema };
    const migrate = (on: Transaction) => migrateTenant(on, tenant, apps, { changes, files, secrets, lockMigrations: db.supportsAdvisoryLocks });
    const changed = row.cluster === DEFAULT_CLUSTER ? await migrate(tx) : await target.clusters.database(row.cluster).transaction(migrate);
    await recordTenantRelease(tx, name, release);
    return { status: changed.length > 0 ? 'migrated' : 'up to date', changes: changed };
  });
}

/** A tenant's migration failed: the run stopped there (exit 1, the tenant named in the message). */
export class TenantMigrationError extends FrappeError {
  static override readonly excType: string = 'TenantMigrationError';

  /** The run's report (`quire migrate --json` prints it beside the error): `release`, `platform`, `tenants` done, and `failed`. */
  constructor(readonly report: MigrationReport & { failed: NonNullable<MigrationReport['failed']> }) {
    const done = Object.keys(report.tenants).length;
    super(
      `Tenant ${report.failed.tenant} failed to migrate to release ${report.release}: ${report.failed.error}. ` +
        `${done} tenant(s) before it are at this release and stay so; fix the cause and run quire migrate again to do the rest.`,
    );
  }
}
