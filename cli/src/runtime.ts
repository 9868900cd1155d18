import path from 'node:path';
import { loadApps, type AppSource } from '@quire/apps';
import type { PlatformConfig } from '@quire/config';
import { openDatabase, type Database } from '@quire/db';
import { frappeApp } from '@quire/frappe';
import { LocalDiskStore } from '@quire/files';
import { loadSecretBox, Platform } from '@quire/tenancy';

/** App specifiers from QUIRE_APPS: `frappe` is built in; anything else is a path to an app folder. */
export function appSources(specs: string[]): AppSource[] {
  const sources = specs.map((spec) => (spec === 'frappe' ? frappeApp : { name: path.basename(path.resolve(spec)), root: path.resolve(spec) }));
  if (!sources.some((s) => s.name === 'frappe')) sources.unshift(frappeApp);
  return sources;
}

export interface Runtime {
  db: Database;
  platform: Platform;
  close(): Promise<void>;
}

/**
 * Opens what every command and service runs on: the database (Postgres at DATABASE_URL, else the
 * embedded one), the platform schema (migrated), the configured apps, and the platform caches.
 */
export async function openRuntime(config: PlatformConfig, applicationName = 'quire'): Promise<Runtime> {
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    applicationName,
  });
  try {
    await Platform.migratePlatform(db);
    const apps = await loadApps(appSources(config.apps));
    const platform = await Platform.open({
      db,
      apps,
      files: new LocalDiskStore(config.filesDir),
      secrets: await loadSecretBox(db, config.encryptionKey),
      baseDomain: config.baseDomain,
      defaultTenant: config.defaultTenant,
      refreshIntervalMs: config.cacheRefreshIntervalMs,
      apiKeyTtlMs: config.apiKeyCacheTtlMs,
      sessionExpirySeconds: config.sessionExpirySeconds,
    });
    return {
      db,
      platform,
      async close() {
        await platform.close();
        await db.close();
      },
    };
  } catch (e) {
    await db.close();
    throw e;
  }
}
