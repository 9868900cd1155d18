import fs from 'node:fs';
import path from 'node:path';
import { PGlite, type Transaction as PgliteTx } from '@electric-sql/pglite';
import { AfterCommitQueue, currentTransaction } from './context';
import { TransactionHandle, type Session } from './transaction-handle';
import type { Database, ListenHandlers, QueryOptions, QueryResult, Transaction, Unlisten } from './database';
import { TYPE_PARSERS } from './types';

/**
 * The embedded default: PGlite's own API behind our seam (see shared/reference/embedded-postgres.md).
 * PGlite is one session, so every top-level query or transaction takes a turn; queries from inside a
 * transaction's async context join it; nested transactions become savepoints.
 */
export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  readonly supportsAdvisoryLocks = false;
  private tail: Promise<unknown> = Promise.resolve();
  private lockPath: string | undefined;

  private constructor(private readonly pglite: PGlite) {}

  /** Opens (or creates) a data folder; `undefined` keeps everything in memory (tests of the driver). */
  static async open(dataDir?: string): Promise<PgliteDatabase> {
    let lockPath: string | undefined;
    if (dataDir) {
      fs.mkdirSync(dataDir, { recursive: true });
      lockPath = acquireLock(dataDir);
    }
    try {
      const parsers = Object.fromEntries(Object.entries(TYPE_PARSERS).map(([oid, fn]) => [oid, (text: string) => fn(text)]));
      const pglite = new PGlite({ ...(dataDir ? { dataDir } : {}), parsers });
      await pglite.waitReady;
      const db = new PgliteDatabase(pglite);
      db.lockPath = lockPath;
      return db;
    } catch (e) {
      if (lockPath) releaseLock(lockPath);
      throw e;
    }
  }

  private turn<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.catch(() => undefined);
    return result;
  }

  query<R>(text: string, values: readonly unknown[] = [], _options?: QueryOptions): Promise<QueryResult<R>> {
    const tx = currentTransaction.getStore();
    if (tx) return tx.query<R>(text, values);
    return this.turn(() => runQuery<R>(this.pglite, text, values));
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const outer = currentTransaction.getStore();
    if (outer) return outer.savepoint(fn);
    return this.turn(async () => {
      const afterCommit = new AfterCommitQueue();
      const result = await this.pglite.transaction(async (ptx) => {
        const session: Session = { query: <R>(text: string, values: readonly unknown[]) => runQuery<R>(ptx, text, values), exec: (sql) => ptx.exec(sql) };
        // In process there is no round trip to save: deferred writes run one by one, each error its own.
        const tx = new TransactionHandle(session, afterCommit, { lazyBegin: false, fuse: false });
        return currentTransaction.run(tx, async () => {
          const result = await fn(tx);
          await tx.commit();
          return result;
        });
      });
      afterCommit.run();
      return result;
    });
  }

  async listen(channel: string, handlers: ListenHandlers): Promise<Unlisten> {
    const cb = (payload: string) => handlers.onMessage(payload);
    const unlisten = await this.turn(() => this.pglite.listen(channel, cb));
    return () => this.turn(() => unlisten());
  }

  /** One in-process session, no pool. */
  poolStats(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    await this.turn(() => this.pglite.close());
    if (this.lockPath) releaseLock(this.lockPath);
    this.lockPath = undefined;
  }
}

async function runQuery<R>(target: PGlite | PgliteTx, text: string, values: readonly unknown[]): Promise<QueryResult<R>> {
  const res = await target.query<R>(text, values.map(toParam));
  return { rows: res.rows, rowCount: res.affectedRows || res.rows.length };
}

/** pg JSON-encodes plain objects bound to parameters; PGlite would send "[object Object]". */
function toParam(v: unknown): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date) && !(v instanceof Uint8Array)) {
    return JSON.stringify(v);
  }
  return v;
}

function acquireLock(dataDir: string): string {
  const lockPath = path.join(dataDir, 'quire.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      process.once('exit', () => releaseLock(lockPath));
      return lockPath;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number(fs.readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new Error(
          `The embedded database at ${dataDir} is in use by process ${holder}. ` +
            'Stop that process, or set DATABASE_URL to use a Postgres server that many processes can share.',
          { cause: e },
        );
      }
      fs.rmSync(lockPath, { force: true }); // stale lock left by a process that is gone
    }
  }
  throw new Error(`could not lock ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseLock(lockPath: string): void {
  try {
    if (fs.readFileSync(lockPath, 'utf8').trim() === String(process.pid)) fs.rmSync(lockPath, { force: true });
  } catch {
    // already gone
  }
}
