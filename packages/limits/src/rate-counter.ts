import type { Queryable } from '@quire/db';
import { occasionalCleanup } from './cleanup';

/** One counted hit: the hits in the key's current window, this one included, and when the window ends. */
export interface Hit {
  count: number;
  /** Seconds until the window closes and the count starts again (at least 1). */
  resetSeconds: number;
}

/**
 * Counts hits per key over a fixed window that opens at the key's first hit (Frappe's `@rate_limit`:
 * a Redis key with a TTL). Shared by every process of a deployment, so a limit holds however many
 * API processes a client spreads its calls over.
 */
export interface RateCounter {
  hit(key: string, windowSeconds: number): Promise<Hit>;
}

export const RATE_COUNTERS_TABLE = 'quire.rate_counters';

/** The platform table the Postgres counter keeps its windows in (a platform migration creates it). */
export async function createRateCountersTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE ${RATE_COUNTERS_TABLE} (
    "key" text PRIMARY KEY,
    "hits" integer NOT NULL,
    "window_ends" timestamptz NOT NULL
  )`);
  await q.query(`CREATE INDEX rate_counters_window_ends ON ${RATE_COUNTERS_TABLE} ("window_ends")`);
}

/** How often one process clears windows that have ended (they are dead rows, never read again). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Windows in the platform database: one upsert per hit, atomic under concurrency (two processes
 * hitting the same key count two). For the calls a limit guards (password resets, sign-ups), which
 * are rare next to reads; ended windows are deleted about once a minute per process.
 */
export class PostgresRateCounter implements RateCounter {
  private readonly sweep: () => void;

  constructor(private readonly db: Queryable) {
    this.sweep = occasionalCleanup(db, `DELETE FROM ${RATE_COUNTERS_TABLE} WHERE "window_ends" < now()`, SWEEP_EVERY_MS);
  }

  async hit(key: string, windowSeconds: number): Promise<Hit> {
    const { rows } = await this.db.query<{ hits: number; reset: number }>(
      `INSERT INTO ${RATE_COUNTERS_TABLE} AS c ("key", "hits", "window_ends") VALUES ($1, 1, now() + make_interval(secs => $2))
       ON CONFLICT ("key") DO UPDATE SET
         "hits" = CASE WHEN c."window_ends" <= now() THEN 1 ELSE c."hits" + 1 END,
         "window_ends" = CASE WHEN c."window_ends" <= now() THEN now() + make_interval(secs => $2) ELSE c."window_ends" END
       RETURNING "hits", extract(epoch FROM "window_ends" - now())::float8 AS "reset"`,
      [key, windowSeconds],
    );
    this.sweep();
    const row = rows[0] ?? { hits: 1, reset: windowSeconds };
    return { count: row.hits, resetSeconds: Math.max(1, Math.ceil(row.reset)) };
  }
}
