import type { Runtime } from '@quire/runtime';
import { migrateRelease, TenantMigrationError, type TenantMigrationOutcome } from '@quire/tenancy';
import type { CommandResult } from '../output';

export interface MigrateFlags {
  /** With --json nothing is printed until the one JSON object at the end. */
  json: boolean;
}

function tenantLine(tenant: string, outcome: TenantMigrationOutcome): string {
  return outcome.status === 'migrated' ? `${tenant}: migrated (${outcome.changes.join(', ')})` : `${tenant}: ${outcome.status}`;
}

/**
 * The platform schema, then every tenant not yet at this build's release (see migrateRelease).
 * Safe to run again, and to run twice at once: the second run waits for the first. In text mode
 * each tenant's line is printed as soon as its transaction committed, so the log of a killed run
 * says exactly which tenants are done.
 */
export async function migrate(rt: Runtime, flags: MigrateFlags): Promise<CommandResult> {
  const say = (line: string): void => {
    if (!flags.json) process.stdout.write(`${line}\n`);
  };
  const report = await migrateRelease(rt.platform, {
    onPlatform: (applied) => say(applied.length ? `Platform: applied ${applied.join(', ')}` : 'Platform: up to date'),
    onCluster: (cluster, applied) => say(applied.length ? `Cluster ${cluster}: applied ${applied.join(', ')}` : `Cluster ${cluster}: up to date`),
    onTenant: (tenant, outcome) => say(tenantLine(tenant, outcome)),
  });
  await rt.platform.tenants.refresh();
  if (report.failed) throw new TenantMigrationError({ ...report, failed: report.failed });
  const outcomes = Object.values(report.tenants);
  const count = (status: TenantMigrationOutcome['status']) => outcomes.filter((o) => o.status === status).length;
  const summary = outcomes.length
    ? `${outcomes.length} tenant(s): ${count('migrated')} migrated, ${count('up to date')} up to date, ${count('already at this release')} already at this release`
    : 'no tenants';
  return {
    json: { release: report.release, platform: report.platform, clusters: report.clusters ?? {}, tenants: report.tenants },
    text: `Release ${report.release}: complete (${summary})`,
  };
}
