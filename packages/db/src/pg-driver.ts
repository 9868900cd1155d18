import { createHash } from 'node:crypto';
import pg from 'pg';
import { AfterCommitQueue } from './context';
import { DEFAULT_PREPARED_PER_CONNECTION, runStatement, type Around } from './pg-query';
import { TransactionHandle, type Session } from './transaction-handle';
import type { Database, ListenHandlers, PoolStats, QueryOptions, QueryResult, Transaction, TransactionOptions, Unlisten } from './database';
import { ident, literal } from './sql';
import { TYPE_PARSERS } from './types';
import { PG, pgErrorInfo } from './pg-errors';

export interface PgDatabaseOptions {
  connectionString: string;
  poolSize?: number;
  /**
   * Seconds a connection may sit idle in the pool before it is closed (default 300; 0: never).
   * Not pg's 10 s: a backend's relation, catalog and plan caches are per connection and, with a
   * schema per tenant, are built again tenant by tenant (measured over 1,000 tenants: twice the
   * Postgres CPU per read, 20% fewer reads a second, until every connection has met every tenant),
   * so a pool that shrinks at every lull pays that again at each burst.
   */
  idleSeconds?: number;
  statementTimeoutMs?: number;
  /**
   * Prepared statements each connection keeps, the least recently used closed beyond it (default
   * 2,000; 0 prepares none). Schema-per-tenant gives every tenant statement texts of its own: the
   * hot ones of all active tenants fit, at some memory per backend (~24 KiB a plan measured).
   */
  preparedPerConnection?: number;
  applicationName?: string;
  /**
   * `transaction` when `connectionString` goes through a transaction pooler (PgBouncer
   * pool_mode=transaction): no named prepared statements and no session settings, since consecutive
   * statements may run on different server connections.
   */
  poolMode?: 'session' | 'transaction';
  /** A direct (unpooled) URL for LISTEN, which a transaction pooler cannot carry; defaults to connectionString. */
  directConnectionString?: string;
  /**
   * Milliseconds a statement waits for a connection: a new one to be established, or, the pool
   * being full, one to be given back (pg-pool's connectionTimeoutMillis). Past it the statement
   * fails (isConnectionFailure) instead of waiting for a server that does not answer. Default: no
   * limit.
   */
  connectTimeoutMs?: number;
  /**
   * TCP keepalive on every connection (LISTEN's too), probing after KEEPALIVE_IDLE_MS idle: a
   * connection to a server that went away without closing it is found dead and replaced, rather
   * than lent out to hang.
   */
  keepAlive?: boolean;
}

/**
 * Idle time before the first keepalive probe. Not 0, which keeps the system's default (two hours on
 * Linux); libuv then probes every second, ten times, so a dead peer is noticed in about 20 s.
 */
const KEEPALIVE_IDLE_MS = 10_000;

/** The connection settings pg.Pool and the LISTEN client share. */
function connectionConfig(options: PgDatabaseOptions): Pick<pg.ClientConfig, 'connectionTimeoutMillis' | 'keepAlive' | 'keepAliveInitialDelayMillis'> {
  return {
    ...(options.connectTimeoutMs ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
    ...(options.keepAlive ? { keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS } : {}),
  };
}

/** pg's own parsers, seen as what they are: text in, a value out. */
const pgTypeParser = pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (text: string) => unknown;

/** Our parsers for the types whose shape we fix (TYPE_PARSERS), pg's for the rest. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    const parser = TYPE_PARSERS[oid];
    if (parser && format !== 'binary') return parser;
    return pgTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** `SET` statements for a new pooled connection (literals: SET takes no parameters). */
function sessionSettings(options: PgDatabaseOptions): string[] {
  const out = [`SET application_name = ${literal(options.applicationName ?? 'quire')}`];
  if (options.statementTimeoutMs) out.push(`SET statement_timeout = ${Math.trunc(options.statementTimeoutMs)}`);
  return out;
}

/** Statement names remembered by text; the names are derived from the texts, so forgetting them is only a recomputation. */
const MAX_NAMED_TEXTS = 50_000;

export class PgDatabase implements Database {
  readonly kind = 'postgres' as const;
  readonly supportsAdvisoryLocks = true;
  private readonly pool: pg.Pool;
  private readonly prepared = new Map<string, string>();
  private readonly listeners = new Map<string, Set<ListenHandlers>>();
  private listenClient: pg.Client | undefined;
  private listenConnecting: Promise<void> | undefined;
  private closed = false;

  private readonly transactionPooling: boolean;
  private readonly preparedPerConnection: number;

  constructor(private readonly options: PgDatabaseOptions) {
    this.transactionPooling = options.poolMode === 'transaction';
    this.preparedPerConnection = options.preparedPerConnection ?? DEFAULT_PREPARED_PER_CONNECTION;
    // Settings go in after connecting, not as startup parameters: a stock PgBouncer refuses unknown
    // startup parameters (statement_timeout). Behind a transaction pooler a session setting would
    // land on whichever server connection ran it, so there it belongs on the database role instead.
    const settings = this.transactionPooling ? '' : sessionSettings(options).join('; ');
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      idleTimeoutMillis: (options.idleSeconds ?? 300) * 1000,
      ...connectionConfig(options),
      types,
      // Awaited by the pool before the connection is first lent out.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- pg-pool awaits the promise onConnect returns; its types say void
      ...(settings ? { onConnect: (client: pg.ClientBase) => client.query(settings) } : {}),
    });
    // An idle client losing its connection must not crash the process; the pool replaces it.
    this.pool.on('error', () => {});
    // Nor a lent one that loses it between two statements (pg emits 'error' when no query is
    // running to reject): the next statement on it fails, and the connection is then discarded.
    this.pool.on('connect', (client) => client.on('error', () => {}));
  }

  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  query<R>(text: string, values: readonly unknown[] = [], options?: QueryOptions): Promise<QueryResult<R>> {
    // A statement with a timeout of its own runs in a transaction that sets it (SET LOCAL: nothing outlives it).
    if (this.shorterTimeout(options?.statementTimeoutMs) !== undefined) {
      const prepare = options?.prepare;
      return this.transaction((tx) => tx.query<R>(text, values, prepare ? { prepare } : undefined), { statementTimeoutMs: options?.statementTimeoutMs });
    }
    return this.run<R>(text, values, options);
  }

  /** `ms` when it is shorter than the pool's own statement timeout (none: any is). */
  private shorterTimeout(ms: number | undefined): number | undefined {
    if (ms === undefined || !(ms > 0)) return undefined;
    const pool = this.options.statementTimeoutMs;
    return pool && pool <= ms ? undefined : Math.trunc(ms);
  }

  private statementName(text: string): string | undefined {
    if (this.transactionPooling || this.preparedPerConnection === 0) return undefined;
    // Each connection keeps its `preparedPerConnection` most recently used prepared statements (pg-query.ts).
    let name = this.prepared.get(text);
    if (name === undefined) {
      if (this.prepared.size >= MAX_NAMED_TEXTS) this.prepared.clear();
      name = 'q_' + createHash('sha1').update(text).digest('base64url');
      this.prepared.set(text, name);
    }
    return name;
  }

  /** A statement on a connection of the pool's own, lent for it alone. */
  private async run<R>(text: string, values: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      return await this.runOn<R>(client, text, values, options, undefined, true);
    } catch (e) {
      // An error the server answered leaves the connection usable; any other (a lost socket) does not.
      if (!pgErrorInfo(e)) broken = e instanceof Error ? e : new Error(String(e));
      throw e;
    } finally {
      client.release(broken);
    }
  }

  private async runOn<R>(
    client: pg.PoolClient,
    text: string,
    values: readonly unknown[],
    options: QueryOptions | undefined,
    around: Around | undefined,
    retryable: boolean,
  ): Promise<QueryResult<R>> {
    const name = options?.prepare ? this.statementName(text) : undefined;
    try {
      const res = await runStatement(client, text, values as unknown[], name, around, this.preparedPerConnection);
      return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
    } catch (e) {
      // A prepared plan whose result shape changed under a DDL change: retry once unprepared
      // (outside a transaction only: inside one, the failed statement aborted it).
      if (name && retryable && pgErrorInfo(e)?.code === PG.cachedPlanChanged) {
        this.prepared.delete(text);
        const res = await runStatement(client, text, values as unknown[], undefined);
        return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
      }
      throw e;
    }
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
    const timeoutMs = this.shorterTimeout(options?.statementTimeoutMs);
    const client = await this.pool.connect();
    const afterCommit = new AfterCommitQueue();
    const session: Session = {
      query: <R>(text: string, values: readonly unknown[], options?: QueryOptions) => this.runOn<R>(client, text, values, options, undefined, false),
      exec: (sql) => client.query(sql),
      queryAround: <R>(text: string, values: readonly unknown[], options: QueryOptions | undefined, around: Around) =>
        this.runOn<R>(client, text, values, options, around, false),
    };
    // BEGIN rides on the first statement and COMMIT on the last; a write made only of deferred writes is one statement.
    const tx = new TransactionHandle(session, afterCommit, { lazyBegin: true, fuse: true });
    let broken = false;
    try {
      // Rides with BEGIN; ends with the transaction, so the pooled connection keeps its own setting.
      if (timeoutMs !== undefined) await tx.query(`SET LOCAL statement_timeout = ${timeoutMs}`);
      const result = await fn(tx);
      await tx.commit();
      afterCommit.run();
      return result;
    } catch (e) {
      try {
        await tx.rollback();
      } catch {
        broken = true;
      }
      throw e;
    } finally {
      client.release(broken);
    }
  }

  async listen(channel: string, handlers: ListenHandlers): Promise<Unlisten> {
    let set = this.listeners.get(channel);
    const isNew = !set;
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(handlers);
    await this.ensureListenClient();
    if (isNew && this.listenClient) await this.listenClient.query(`LISTEN ${ident(channel)}`);
    return async () => {
      set.delete(handlers);
      if (set.size === 0) {
        this.listeners.delete(channel);
        await this.listenClient?.query(`UNLISTEN ${ident(channel)}`).catch(() => {});
      }
    };
  }

  private ensureListenClient(): Promise<void> {
    if (this.listenClient) return Promise.resolve();
    this.listenConnecting ??= this.connectListener().finally(() => {
      this.listenConnecting = undefined;
    });
    return this.listenConnecting;
  }

  private async connectListener(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.directConnectionString ?? this.options.connectionString,
      ...connectionConfig(this.options),
      types,
    });
    client.on('notification', (msg) => {
      const set = this.listeners.get(msg.channel);
      if (!set) return;
      for (const h of set) h.onMessage(msg.payload ?? '');
    });
    const onLost = () => {
      if (this.listenClient !== client) return;
      this.listenClient = undefined;
      client.end().catch(() => {});
      if (!this.closed) this.scheduleReconnect(1);
    };
    client.on('error', onLost);
    client.on('end', onLost);
    await client.connect();
    // Closed while it connected: kept, it would hold the process open (a CLI that never exits).
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.listenClient = client;
    for (const channel of this.listeners.keys()) await client.query(`LISTEN ${ident(channel)}`);
  }

  private scheduleReconnect(attempt: number): void {
    const delay = Math.min(5000, 100 * 2 ** attempt);
    setTimeout(() => {
      if (this.closed) return;
      this.ensureListenClient().then(
        () => {
          // Anything sent while we were away is lost: let every listener resynchronise.
          for (const set of this.listeners.values()) for (const h of set) h.onReset?.();
        },
        () => this.scheduleReconnect(attempt + 1),
      );
    }, delay).unref();
  }

  async close(drainMs = 0): Promise<void> {
    this.closed = true;
    const client = this.listenClient;
    this.listenClient = undefined;
    await client?.end().catch(() => {});
    const until = Date.now() + drainMs;
    const busy = () => this.pool.waitingCount > 0 || this.pool.totalCount > this.pool.idleCount;
    while (busy() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    // pg-pool's end() waits for every lent connection to come back: past the deadline, not longer.
    const ended = this.pool.end();
    if (busy()) ended.catch(() => {});
    else await ended;
  }
}
