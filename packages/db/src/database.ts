export type Row = Record<string, unknown>;

export interface QueryResult<R = Row> {
  rows: R[];
  rowCount: number;
}

export interface QueryOptions {
  /** Ask the driver to keep a server-side prepared statement for this text (hot paths). */
  prepare?: boolean;
  /** A shorter statement timeout than the pool's for this statement (a tenant's plan); the server driver only. */
  statementTimeoutMs?: number | undefined;
}

export interface TransactionOptions {
  /** A shorter statement timeout than the pool's for every statement of the transaction; the server driver only. */
  statementTimeoutMs?: number | undefined;
}

export interface Queryable {
  query<R = Row>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
}

/**
 * Something that runs queries and transactions: a Database, or a Transaction (whose `transaction`
 * is a savepoint). Code that may run inside someone else's transaction takes an Executor.
 */
export interface Executor extends Queryable {
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
}

/** A write whose result nobody reads, sent later with others (Transaction.defer). */
export interface DeferredWrite {
  text: string;
  values: readonly unknown[];
  /** The table written, unqualified, as Postgres names it in errors: a fused statement's error goes to its write. */
  table: string;
  /** The row written (any key unique per row, e.g. `<schema>.<table> <name>`): two writes to one row are never fused. */
  row: string;
  /** Turns this write's database error into the caller's (a duplicate name into DuplicateEntryError). */
  mapError?: (e: unknown) => unknown;
}

export interface Transaction extends Executor {
  /**
   * Sends `write` just before the transaction's next statement or at commit, with the writes
   * deferred next to it as one statement. Only for writes nothing reads back before commit; an
   * error surfaces from whatever sends it (a later `query`, or the commit) as `mapError` maps it.
   */
  defer(write: DeferredWrite): void;
  /** Runs `fn` inside a SAVEPOINT; a throw rolls back to it and rethrows. Same as `transaction`. */
  savepoint<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs after a successful COMMIT of the outermost transaction (cache invalidation, wake-ups). */
  afterCommit(fn: () => void): void;
  /** Runs several statements without parameters (`;`-separated) in one round trip: a DDL script. */
  script(sql: string): Promise<void>;
}

export type Unlisten = () => Promise<void>;

export interface ListenHandlers {
  onMessage: (payload: string) => void;
  /** Called when notifications may have been missed (the listening connection was re-established). */
  onReset?: () => void;
}

/**
 * The one database seam. Both drivers (pg.Pool, embedded PGlite) run the same SQL and return
 * values in the same shapes (see types.ts).
 */
export interface Database extends Executor {
  readonly kind: 'postgres' | 'pglite';
  /**
   * One transaction on one connection. Everything that must be part of it goes through `tx`
   * (pass `tx` on as the Executor); `tx.transaction` nests as a savepoint.
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
  listen(channel: string, handlers: ListenHandlers): Promise<Unlisten>;
  /** Whether a session-scoped advisory lock is meaningful (false on the single-session embedded driver). */
  readonly supportsAdvisoryLocks: boolean;
  /** The connection pool's state now (for metrics); undefined for a driver without a pool. */
  poolStats(): PoolStats | undefined;
  /**
   * Closes the connections. Statements in flight or waiting for a connection (requests still
   * being served at a graceful stop) are given up to `drainMs` to finish; what runs past it is cut.
   */
  close(drainMs?: number): Promise<void>;
}

export interface PoolStats {
  /** Connections open. */
  total: number;
  /** Open and not lent out. */
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

/**
 * Where each tenant's schema lives: with several Postgres clusters, the database of the tenant's
 * own. Everything that reads or writes a tenant's tables asks this for the database, by name.
 */
export interface TenantDatabases {
  of(tenant: { readonly name: string }): Database;
}

/** Every tenant in `db` (one cluster: tools and tests that open a database of their own). */
export function allIn(db: Database): TenantDatabases {
  return { of: () => db };
}
