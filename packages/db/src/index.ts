export type {
  Database,
  DeferredWrite,
  Executor,
  Queryable,
  QueryResult,
  QueryOptions,
  TransactionOptions,
  Row,
  Transaction,
  ListenHandlers,
  Unlisten,
  PoolStats,
  TenantDatabases,
} from './database';
export { allIn } from './database';
export { PgDatabase, type PgDatabaseOptions } from './pg-driver';
export { PgliteDatabase } from './pglite-driver';
export { ident, qualified, literal } from './sql';
export { normalizeTimestamp } from './types';
export { pgErrorInfo, isConnectionFailure, PG, type PgErrorInfo } from './pg-errors';
export { runMigrations, withAdvisoryLock, type Migration, type MigrationOptions } from './migrations';
export { openDatabase, type OpenDatabaseOptions } from './open';
export { createDatabaseIfMissing } from './create-database';
export {
  publishInvalidation,
  subscribeInvalidations,
  INVALIDATION_CHANNEL,
  type InvalidationMessage,
  type InvalidationTopic,
  type InvalidationHandlers,
  type ChangeNotifier,
  type DocumentChange,
  type RealtimeMessage,
  type RealtimeTarget,
} from './invalidation';
