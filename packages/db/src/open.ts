import type { Database } from './database';
import { PgDatabase } from './pg-driver';
import { PgliteDatabase } from './pglite-driver';

export interface OpenDatabaseOptions {
  /** A Postgres URL; without one the embedded database in `dataDir` is used. */
  url?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** Seconds an idle pooled connection is kept (Postgres server only). */
  poolIdleSeconds?: number;
  statementTimeoutMs?: number;
  /** Prepared statements each connection keeps (Postgres server only). */
  preparedPerConnection?: number;
  applicationName?: string;
  poolMode?: 'session' | 'transaction';
  /** A direct URL for LISTEN when `url` goes through a transaction pooler. */
  directUrl?: string | undefined;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url) {
    return new PgDatabase({
      connectionString: options.url,
      ...(options.poolSize ? { poolSize: options.poolSize } : {}),
      ...(options.poolIdleSeconds !== undefined ? { idleSeconds: options.poolIdleSeconds } : {}),
      ...(options.statementTimeoutMs ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
      ...(options.preparedPerConnection !== undefined ? { preparedPerConnection: options.preparedPerConnection } : {}),
      ...(options.applicationName ? { applicationName: options.applicationName } : {}),
      ...(options.poolMode ? { poolMode: options.poolMode } : {}),
      ...(options.directUrl ? { directConnectionString: options.directUrl } : {}),
    });
  }
  return PgliteDatabase.open(options.dataDir);
}
