import { AsyncLocalStorage } from 'node:async_hooks';
import type { Transaction } from './database';

/**
 * The transaction an async context is running in, so that `db.query` issued from inside
 * `db.transaction(fn)` joins it instead of taking another connection (or, on the embedded
 * single-session driver, waiting forever behind it).
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
