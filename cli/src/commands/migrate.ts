import { migrateTenant, Platform } from '@quire/tenancy';
import type { CommandResult } from '../output';
import type { Runtime } from '@quire/runtime';

/** Platform schema, then every tenant's standard DocTypes and records. Safe to run again. */
export async function migrate(rt: Runtime): Promise<CommandResult> {
  const platformApplied = await Platform.migratePlatform(rt.db);
  await rt.platform.tenants.refresh();
  const tenants: Record<string, string[]> = {};
  for (const t of rt.platform.tenants.list()) {
    const { changes, files, secrets } = rt.platform;
    tenants[t.name] = await migrateTenant(rt.db, t, rt.platform.apps, { changes, files, secrets, lockMigrations: rt.db.supportsAdvisoryLocks });
  }
  const changed = Object.entries(tenants).filter(([, c]) => c.length > 0);
  return {
    json: { platform: platformApplied, tenants },
    text: [
      platformApplied.length ? `Platform: applied ${platformApplied.join(', ')}` : 'Platform: up to date',
      `Tenants: ${Object.keys(tenants).length} checked${changed.length ? `; changed ${changed.map(([t, c]) => `${t} (${c.join(', ')})`).join('; ')}` : ', all up to date'}`,
    ].join('\n'),
  };
}
