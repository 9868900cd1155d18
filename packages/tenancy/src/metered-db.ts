import type { Database, Executor, QueryOptions, QueryResult, Transaction } from '@quire/db';
import type { UsageMeter } from './usage';

/**
 * The database as one tenant's requests reach it: the time each statement or transaction takes,
 * from sending to its answer, is counted to the tenant (usage metering: request time spent on
 * Postgres). Nested statements go through the transaction itself, so nothing is counted twice.
 */
export class MeteredExecutor implements Executor {
  constructor(
    private readonly db: Database,
    private readonly tenant: string,
    private readonly meter: UsageMeter,
  ) {}

  async query<R>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    const started = performance.now();
    try {
      return await this.db.query<R>(text, values, options);
    } finally {
      this.meter.database(this.tenant, performance.now() - started);
    }
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await this.db.transaction(fn);
    } finally {
      this.meter.database(this.tenant, performance.now() - started);
    }
  }
}
