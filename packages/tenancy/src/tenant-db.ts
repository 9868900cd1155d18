import { pgErrorInfo, PG, type Database, type Executor, type QueryOptions, type QueryResult, type Transaction } from '@quire/db';
import { QueryTimeoutError } from '@quire/errors';
import type { UsageMeter } from './usage';

/**
 * The database as one tenant's requests reach it. The time each statement or transaction takes,
 * from sending to its answer, is counted to the tenant (usage metering: request time spent on
 * Postgres); nested statements go through the transaction itself, so nothing is counted twice.
 * A plan's statement timeout bounds each of its statements; one cut short is a QueryTimeoutError
 * naming the limit, never the SQL.
 */
export class TenantDatabase implements Executor {
  constructor(
    private readonly db: Database,
    private readonly tenant: string,
    private readonly meter: UsageMeter | undefined,
    private readonly statementTimeoutMs: number | undefined,
  ) {}

  async query<R>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    const started = performance.now();
    try {
      return await this.db.query<R>(
        text,
        values,
        this.statementTimeoutMs === undefined ? options : { ...options, statementTimeoutMs: this.statementTimeoutMs },
      );
    } catch (e) {
      throw this.timedOut(e);
    } finally {
      this.meter?.database(this.tenant, performance.now() - started);
    }
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await this.db.transaction(fn, this.statementTimeoutMs === undefined ? undefined : { statementTimeoutMs: this.statementTimeoutMs });
    } catch (e) {
      throw this.timedOut(e);
    } finally {
      this.meter?.database(this.tenant, performance.now() - started);
    }
  }

  private timedOut(e: unknown): unknown {
    if (this.statementTimeoutMs === undefined || pgErrorInfo(e)?.code !== PG.queryCanceled) return e;
    return new QueryTimeoutError(
      `This request took longer than the ${this.statementTimeoutMs} ms this site's plan allows one database statement: ask for less at a time (fewer rows, a narrower filter)`,
      {
        title: 'Request Timed Out',
        cause: e,
      },
    );
  }
}
