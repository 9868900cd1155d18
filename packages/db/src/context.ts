import { AsyncLocalStorage } from 'node:async_hooks';
import type { Transaction } from './database';

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
