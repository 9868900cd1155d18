import type { Queryable } from '@quire/db';
import { occasionalCleanup } from './cleanup';

/**
 * Frappe's site rate limit (frappe/rate_limiter.py), per tenant: a budget of request *time* (the
 * site config's `rate_limit: {limit, window}`, seconds of request time per `window` seconds), in a
 * fixed window (`floor(now / window)`). A tenant over its budget is refused 429 until the window
 * ends. Time is counted in each process and pushed to a store every process shares every
 * `syncMs` (Redis with REDIS_URL, else the platform database), which answers the totals: nothing
 * on a request's path waits on either. So a tenant may run over by what its requests take in one
 * sync interval, per process.
 */

/** A tenant's site rate limit, as its config stores it (Frappe's keys). */
export interface SiteRateLimit {
  /** Seconds of request time per window. */
  limit: number;
  /** The window, in seconds. */
  window: number;
}

/** Where the windows' totals live, shared by every process. */
export interface WindowStore {
  /** Adds each entry's microseconds to its key (kept `ttlSeconds`) and answers the keys' totals. */
  add(entries: readonly WindowEntry[]): Promise<number[]>;
  /** The keys' totals (0 for a key nobody counted). */
  read(keys: readonly string[]): Promise<number[]>;
}

export interface WindowEntry {
  key: string;
  micros: number;
  ttlSeconds: number;
}

/** What a check answers: whether the request may run, and Frappe's X-RateLimit-* values. */
export interface RateCheck {
  allowed: boolean;
  /** The window's budget, in microseconds (X-RateLimit-Limit). */
  limitMicros: number;
  /** What is left of it, in microseconds (X-RateLimit-Remaining). */
  remainingMicros: number;
  /** Seconds until the window ends (X-RateLimit-Reset, and Retry-After when refused). */
  resetSeconds: number;
}

interface WindowState {
  key: string;
  ttlSeconds: number;
  /** The shared total as last answered by the store. */
  known: number;
  /** Counted here, not yet pushed. */
  pending: number;
  /** Being pushed now (counted in the check until the store answers). */
  inFlight: number;
  /** Requests in progress here, each counted at its tenant's usual time until it is done. */
  reserved: number;
  /** When a check last looked at it (windows nobody asks about are dropped). */
  lastUsed: number;
}

export interface SiteRateLimiterOptions {
  store: WindowStore;
  /** How often counts are pushed and totals read. */
  syncMs: number;
  /** Told once per failure streak when the store cannot be reached (the limit then counts this process's time only). */
  onStoreError?: (err: unknown) => void;
}

/** Weight of the latest request in a tenant's usual time. */
const USUAL_WEIGHT = 0.2;
/** What a request of a tenant not yet seen here is taken to cost (µs), at most a quarter of its budget. */
const FIRST_ESTIMATE_MICROS = 100_000;
/** Tenants whose usual time is kept (the oldest forgotten beyond). */
const MAX_USUAL = 10_000;

export class SiteRateLimiter {
  private readonly windows = new Map<string, WindowState>();
  /** What each limited tenant's requests usually take here (µs, exponentially weighted). */
  private readonly usual = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private failing = false;
  private refusals = 0;

  constructor(private readonly options: SiteRateLimiterOptions) {}

  /** Requests refused so far (for quire_tenant_throttled_total{reason="rate_limit"}). */
  get refused(): number {
    return this.refusals;
  }

  /** Whether `tenant`, limited by `setting`, may run a request now. */
  check(tenant: string, setting: SiteRateLimit, now: number = Date.now()): RateCheck {
    const state = this.windowOf(tenant, setting, now);
    state.lastUsed = now;
    const limitMicros = Math.round(setting.limit * 1_000_000);
    const used = state.known + state.pending + state.inFlight + state.reserved;
    const windowMs = setting.window * 1000;
    const resetSeconds = Math.max(1, Math.ceil((windowMs - (now % windowMs)) / 1000));
    const allowed = used <= limitMicros;
    if (!allowed) this.refusals++;
    return { allowed, limitMicros, remainingMicros: Math.max(0, limitMicros - used), resetSeconds };
  }

  /**
   * Starts counting a request the check let through: until it is done (the returned function,
   * called with its time) it counts at what the tenant's requests usually take, so a burst at the
   * start of a window cannot all pass before any of it is counted.
   */
  begin(tenant: string, setting: SiteRateLimit, now: number = Date.now()): (micros: number) => void {
    const state = this.windowOf(tenant, setting, now);
    // Until one of its requests is done here, a tenant's cost is a guess: a few may start at once (a
    // desk opening), not every connection a flood holds open at the window's start.
    const estimate = Math.round(this.usual.get(tenant) ?? Math.min(FIRST_ESTIMATE_MICROS, (setting.limit * 1_000_000) / 4));
    state.reserved += estimate;
    let done = false;
    return (micros: number) => {
      if (done) return;
      done = true;
      state.reserved -= estimate;
      const spent = Math.max(0, Math.round(micros));
      const usual = this.usual.get(tenant);
      this.usual.set(tenant, usual === undefined ? spent : usual + USUAL_WEIGHT * (spent - usual));
      if (this.usual.size > MAX_USUAL) this.usual.delete(this.usual.keys().next().value as string);
      this.record(tenant, setting, spent);
    };
  }

  /** Counts a finished request's time against the tenant's current window. */
  record(tenant: string, setting: SiteRateLimit, micros: number, now: number = Date.now()): void {
    this.windowOf(tenant, setting, now).pending += Math.max(0, Math.round(micros));
    this.timer ??= setInterval(() => void this.sync(), this.options.syncMs).unref();
  }

  /** Pushes what is counted and reads the totals of the windows in use (also run by the timer). */
  sync(): Promise<void> {
    this.syncing ??= this.pushAndRead().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sync().catch(() => undefined);
  }

  private windowOf(tenant: string, setting: SiteRateLimit, now: number): WindowState {
    const index = Math.floor(now / (setting.window * 1000));
    // The window's length is in the key: a changed setting starts a new count.
    const key = `${tenant}:${setting.window}:${index}`;
    let state = this.windows.get(key);
    if (!state)
      this.windows.set(key, (state = { key, ttlSeconds: Math.ceil(setting.window) + 60, known: 0, pending: 0, inFlight: 0, reserved: 0, lastUsed: now }));
    return state;
  }

  private async pushAndRead(): Promise<void> {
    const now = Date.now();
    const pushing = [...this.windows.values()].filter((w) => w.pending > 0);
    const reading = [...this.windows.values()].filter((w) => w.pending === 0 && now - w.lastUsed < 10 * this.options.syncMs);
    for (const w of pushing) {
      w.inFlight = w.pending;
      w.pending = 0;
    }
    try {
      if (pushing.length > 0) {
        const totals = await this.options.store.add(pushing.map((w) => ({ key: w.key, micros: w.inFlight, ttlSeconds: w.ttlSeconds })));
        pushing.forEach((w, i) => (w.known = Math.max(w.known, totals[i] ?? 0)));
      }
      if (reading.length > 0) {
        const totals = await this.options.store.read(reading.map((w) => w.key));
        reading.forEach((w, i) => (w.known = Math.max(w.known, totals[i] ?? 0)));
      }
      for (const w of pushing) w.inFlight = 0;
      this.failing = false;
    } catch (err) {
      // Not lost: counted again at the next push; meanwhile checks still see it.
      for (const w of pushing) {
        w.pending += w.inFlight;
        w.inFlight = 0;
      }
      if (!this.failing) this.options.onStoreError?.(err);
      this.failing = true;
    }
    // Windows that ended, or that nobody asked about for a while, are forgotten.
    for (const [key, w] of this.windows) if (w.pending === 0 && w.reserved <= 0 && now - w.lastUsed > w.ttlSeconds * 1000) this.windows.delete(key);
    if (this.windows.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

// ------------------------------------------------------------------------------------- stores

export const RATE_WINDOWS_TABLE = 'quire.rate_windows';

/** The platform table the Postgres store keeps windows in (a platform migration creates it). */
export async function createRateWindowsTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE ${RATE_WINDOWS_TABLE} (
    "key" text PRIMARY KEY,
    "micros" bigint NOT NULL,
    "expires_at" timestamptz NOT NULL
  )`);
  await q.query(`CREATE INDEX rate_windows_expires_at ON ${RATE_WINDOWS_TABLE} ("expires_at")`);
}

/** Windows in the platform database: one statement per sync for every window pushed, one to read. */
export class PostgresWindowStore implements WindowStore {
  private readonly sweep: () => void;

  constructor(private readonly db: Queryable) {
    this.sweep = occasionalCleanup(db, `DELETE FROM ${RATE_WINDOWS_TABLE} WHERE "expires_at" < now()`, 60_000);
  }

  async add(entries: readonly WindowEntry[]): Promise<number[]> {
    const { rows } = await this.db.query<{ key: string; micros: number | string }>(
      `INSERT INTO ${RATE_WINDOWS_TABLE} AS w ("key", "micros", "expires_at")
       SELECT k, m, now() + make_interval(secs => t) FROM unnest($1::text[], $2::bigint[], $3::int[]) AS e(k, m, t)
       ON CONFLICT ("key") DO UPDATE SET "micros" = w."micros" + EXCLUDED."micros"
       RETURNING "key", "micros"`,
      [entries.map((e) => e.key), entries.map((e) => e.micros), entries.map((e) => e.ttlSeconds)],
    );
    this.sweep();
    const totals = new Map(rows.map((r) => [r.key, Number(r.micros)]));
    return entries.map((e) => totals.get(e.key) ?? 0);
  }

  async read(keys: readonly string[]): Promise<number[]> {
    const { rows } = await this.db.query<{ key: string; micros: number | string }>(
      `SELECT "key", "micros" FROM ${RATE_WINDOWS_TABLE} WHERE "key" = ANY($1::text[])`,
      [keys],
    );
    const totals = new Map(rows.map((r) => [r.key, Number(r.micros)]));
    return keys.map((k) => totals.get(k) ?? 0);
  }
}

/** The part of an ioredis client the Redis store uses. */
export interface RedisCommands {
  multi(): RedisPipeline;
  mget(keys: string[]): Promise<Array<string | null>>;
}

export interface RedisPipeline {
  incrby(key: string, increment: number): RedisPipeline;
  expire(key: string, seconds: number): RedisPipeline;
  exec(): Promise<Array<[Error | null, unknown]> | null>;
}

/** Windows in Redis, as Frappe keeps them: INCRBY and EXPIRE per window in one MULTI per sync. */
export class RedisWindowStore implements WindowStore {
  constructor(
    private readonly redis: RedisCommands,
    private readonly prefix: string,
  ) {}

  async add(entries: readonly WindowEntry[]): Promise<number[]> {
    const multi = this.redis.multi();
    for (const e of entries) multi.incrby(this.keyOf(e.key), e.micros).expire(this.keyOf(e.key), e.ttlSeconds);
    const replies = (await multi.exec()) ?? [];
    return entries.map((_e, i) => {
      const [err, total] = replies[i * 2] ?? [new Error('no reply'), 0];
      if (err) throw err;
      return Number(total);
    });
  }

  async read(keys: readonly string[]): Promise<number[]> {
    const values = await this.redis.mget(keys.map((k) => this.keyOf(k)));
    return values.map((v) => Number(v ?? 0));
  }

  private keyOf(key: string): string {
    return `${this.prefix}:rate-limit:${key}`;
  }
}
