import { createHash } from 'node:crypto';
import type { LoadedApps } from '@quire/apps';
import type { Queryable } from '@quire/db';
import { definitionHash } from './install';
import { PLATFORM_SCHEMA, platformMigrations } from './platform-schema';
import { tenantMigrations } from './tenant-schema';

/**
 * A release is what one build expects of the database: its platform migrations, its tenant
 * migrations and its apps' standard DocTypes and modules. `quire migrate` records each tenant it
 * brought to a release (quire.tenant_releases), and marks the release complete when every tenant
 * is there (quire.releases); processes of that build are ready once it is.
 */

const releases = new WeakMap<LoadedApps, string>();

/**
 * This build's release: a sha256 (hex) over the platform and tenant migration ids and, per loaded
 * app, its name, modules and standard DocType definitions (`definitionHash`). Stable across
 * processes and load order; any change to what `quire migrate` would do to a tenant changes it.
 */
export function releaseOf(apps: LoadedApps): string {
  let release = releases.get(apps);
  if (release === undefined) {
    release = createHash('sha256')
      .update(JSON.stringify(releaseManifest(apps)))
      .digest('hex');
    releases.set(apps, release);
  }
  return release;
}

interface ReleaseManifest {
  platform: string[];
  tenant: string[];
  apps: Array<{ name: string; modules: string[]; doctypes: string[] }>;
}

function releaseManifest(apps: LoadedApps): ReleaseManifest {
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const appOfModule = new Map(apps.modules.map((m) => [m.module, m.app]));
  const names = [...new Set([...apps.apps.map((a) => a.name), ...apps.modules.map((m) => m.app)])].sort(byName);
  // A DocType whose module no app lists still belongs to the release, under no app.
  const owners = [...names, ''];
  return {
    platform: platformMigrations.map((m) => m.id).sort(byName),
    tenant: tenantMigrations.map((m) => m.id).sort(byName),
    apps: owners.map((name) => ({
      name,
      modules: apps.modules
        .filter((m) => m.app === name)
        .map((m) => m.module)
        .sort(byName),
      doctypes: apps.doctypes
        .filter((d) => (appOfModule.get(d.module) ?? '') === name)
        .map((d) => `${d.name}:${definitionHash(d)}`)
        .sort(byName),
    })),
  };
}

/** Records that `tenant` is at `release` (idempotent). Install and `quire migrate` call it in the transaction that did the work. */
export async function recordTenantRelease(q: Queryable, tenant: string, release: string): Promise<void> {
  await q.query(`INSERT INTO quire.tenant_releases ("tenant", "release") VALUES ($1, $2) ON CONFLICT DO NOTHING`, [tenant, release]);
}

export interface ReleaseStatus {
  /** Every platform migration this build knows is applied. */
  platformReady: boolean;
  /** The release is marked complete, or every tenant is recorded at it (so zero tenants is complete). */
  releaseComplete: boolean;
  /** Tenants not recorded at the release; 0 once it is marked complete, or when there is no platform schema. */
  pendingTenants: number;
}

interface PlatformTables {
  migrations: boolean;
  tenants: boolean;
  progress: boolean;
}

/** Which platform tables exist, in one query that cannot fail on a database without them. */
async function platformTables(db: Queryable): Promise<PlatformTables> {
  const { rows } = await db.query<PlatformTables>(
    `SELECT to_regclass($1) IS NOT NULL AS "migrations", to_regclass($2) IS NOT NULL AS "tenants", to_regclass($3) IS NOT NULL AS "progress"`,
    [`${PLATFORM_SCHEMA}.migrations`, `${PLATFORM_SCHEMA}.tenants`, `${PLATFORM_SCHEMA}.tenant_releases`],
  );
  return rows[0] ?? { migrations: false, tenants: false, progress: false };
}

const knownPlatformMigrations = platformMigrations.map((m) => m.id);

/**
 * Whether the database is at `release`, for readiness checks polled every few seconds: two small
 * queries (the second an index lookup per tenant only while the release is not yet complete).
 * Never throws for a database without the platform schema: that is `platformReady: false`.
 */
export async function releaseStatus(db: Queryable, release: string): Promise<ReleaseStatus> {
  const tables = await platformTables(db);
  if (!tables.progress) {
    // Before this build's first `quire migrate`: no tenant can be recorded at any release yet.
    const tenants = tables.tenants ? (await db.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM quire.tenants`)).rows[0]?.n : 0;
    return { platformReady: false, releaseComplete: false, pendingTenants: tenants ?? 0 };
  }
  const { rows } = await db.query<{ applied: number; completed: boolean | null; pending: number }>(
    `SELECT
       (SELECT count(*)::int FROM quire.migrations WHERE "id" = ANY($1::text[])) AS "applied",
       c.completed,
       CASE WHEN c.completed THEN 0 ELSE (
         SELECT count(*)::int FROM quire.tenants t
         WHERE NOT EXISTS (SELECT 1 FROM quire.tenant_releases r WHERE r."tenant" = t."name" AND r."release" = $2)
       ) END AS "pending"
     FROM (SELECT (SELECT "completed_at" IS NOT NULL FROM quire.releases WHERE "release" = $2) AS completed) c`,
    [knownPlatformMigrations, release],
  );
  const row = rows[0];
  const pending = row?.pending ?? 0;
  return {
    platformReady: row?.applied === knownPlatformMigrations.length,
    releaseComplete: row?.completed === true || pending === 0,
    pendingTenants: pending,
  };
}

/** Whether every platform migration this build knows is applied (false, not an error, when there is no platform schema). */
export async function platformSchemaReady(db: Queryable): Promise<boolean> {
  const tables = await platformTables(db);
  if (!tables.migrations) return false;
  const { rows } = await db.query<{ applied: number }>(`SELECT count(*)::int AS "applied" FROM quire.migrations WHERE "id" = ANY($1::text[])`, [
    knownPlatformMigrations,
  ]);
  return rows[0]?.applied === knownPlatformMigrations.length;
}
