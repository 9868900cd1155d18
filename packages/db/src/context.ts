import { AsyncLocalStorage } from 'node:async_hooks';
import type { Transaction } from './database';
import { ident } from './sql';

/**
 * The embedded driver's safety net: the transaction an async context is running in, so that a
 * stray `db.query` from inside `db.transaction(fn)` joins it instead of waiting forever behind it
 * on PGlite's single session. Only the embedded driver uses it: AsyncLocalStorage turns on
 * promise hooks for the whole process, which costs the server driver's hot path too much.
 */
export const currentTransaction = new AsyncLocalStorage<Transaction>();

export class AfterCommitQueue {
  private readonly fns: Array<() => void> = [];
  push(fn: () => void): void {
    this.fns.push(fn);
  }
  run(): void {
    for (const fn of this.fns.splice(0)) {
      try {
        fn();
      } catch {
        // A failing post-commit hook must not turn a committed write into an error response.
      }
    }
  }
}

/**
 * A transaction handle over one session: `query` runs in it, `transaction`/`savepoint` nest as
 * SAVEPOINTs, `exec` runs parameterless SQL (several statements at once).
 */
export function transactionHandle(query: Transaction['query'], exec: (sql: string) => Promise<unknown>, afterCommit: AfterCommitQueue): Transaction {
  let savepoints = 0;
  const savepoint = async <S>(inner: (t: Transaction) => Promise<S>): Promise<S> => {
    const sp = ident(`sp_${++savepoints}`);
    await exec(`SAVEPOINT ${sp}`);
    try {
      const result = await inner(tx);
      await exec(`RELEASE SAVEPOINT ${sp}`);
      return result;
    } catch (e) {
      await exec(`ROLLBACK TO SAVEPOINT ${sp}`);
      throw e;
    }
  };
  const script = async (sql: string) => {
    await exec(sql);
  };
  const tx: Transaction = { query, afterCommit: (f) => afterCommit.push(f), savepoint, transaction: savepoint, script };
  return tx;
}
