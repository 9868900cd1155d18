/**
 * Fair admission of requests to one process, tenant by tenant (Amazon's "queues per tenant, shed
 * before the shared resource saturates"). A request runs at once while the process has fewer than
 * `maxActive` in progress and its tenant fewer than it is allowed; otherwise it waits in its
 * tenant's queue. What a tenant is allowed follows what its requests cost: quick ones up to
 * `maxActivePerTenant` at once, slow ones (a report, a 500-row list) as few as
 * `minActivePerTenant`, so one tenant's heavy work cannot take every core from the others. Freed slots go to the tenants with waiters in turn (round robin), so a tenant
 * with one waiting request goes before another's hundredth. A tenant whose queue is full, or whose
 * oldest waiter has waited `maxWaitMs`, is refused at once: a cheap 429 for it, never a wait for
 * anyone else. Nothing here does I/O; admission on the fast path is two counters.
 */

export interface TenantGateOptions {
  /** Requests in progress in the process, all tenants together: the database pool's size. */
  maxActive: number;
  /** Requests in progress for one tenant whose requests are quick: its share of the pool. */
  maxActivePerTenant: number;
  /**
   * Requests in progress for one tenant whose requests are slow (each holds a core of Postgres or of
   * this process for a long while): the fewest a tenant is ever allowed. Between the two, a tenant
   * may have as many as fit `maxActivePerTenant × costUnitMs` of its recent request time.
   */
  minActivePerTenant: number;
  /** A request taking this long or less counts as quick. */
  costUnitMs: number;
  /** Requests one tenant may have waiting; the next is refused. */
  maxQueuedPerTenant: number;
  /** How long a request may wait for its turn before it is refused. */
  maxWaitMs: number;
}

/** Why a request was refused instead of admitted. */
export type Refusal = 'queue_full' | 'queue_timeout';

/** Frees the request's slot; call once when its answer is done (or its client gone). */
export type Release = () => void;

interface Waiter {
  since: number;
  admit: (release: Release) => void;
  refuse: (why: Refusal) => void;
}

interface TenantLane {
  active: number;
  /** Its share: requests in progress at once when they are quick (its plan's, else maxActivePerTenant). */
  share: number;
  /** Its requests' recent time in progress (ms, exponentially weighted). */
  costMs: number;
  /** How many it may have in progress, from costMs. */
  allowed: number;
  waiting: Waiter[];
  /** Index of the first waiter still in `waiting` (shifting an array per admission costs O(n)). */
  head: number;
}

export interface TenantGateStats {
  active: number;
  waiting: number;
  /** Requests refused so far, by reason. */
  refused: Readonly<Record<Refusal, number>>;
}

/** How often waiters are checked against maxWaitMs while any tenant has some. */
const SWEEP_MS = 100;
/** Weight of the latest request in a tenant's cost (exponential moving average). */
const COST_WEIGHT = 0.2;

/** A Map that forgets its oldest entries beyond `max` (insertion order; set moves a key to the end). */
class LRUMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > this.max) {
      const oldest = this.keys().next();
      if (!oldest.done) super.delete(oldest.value);
    }
    return this;
  }
}

export class TenantGate {
  private active = 0;
  private waiting = 0;
  private readonly lanes = new Map<string, TenantLane>();
  /** Tenants with waiters, served in turn from `cursor`. */
  private readonly turns: string[] = [];
  private readonly inTurns = new Set<string>();
  private cursor = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly refusedCounts: Record<Refusal, number> = { queue_full: 0, queue_timeout: 0 };
  /** Costs of slow tenants with nothing in progress now: the most recent few thousand. */
  private readonly recentCosts = new LRUMap<string, number>(4096);

  constructor(private readonly options: TenantGateOptions) {}

  get stats(): TenantGateStats {
    return { active: this.active, waiting: this.waiting, refused: this.refusedCounts };
  }

  /**
   * Admits a request of `tenant`: `admit` is called (at once, or when its turn comes) with the
   * release to call when it is done; `refuse` when it may not wait. Exactly one of them is called.
   * `share`, when given, is the tenant's own share in place of `maxActivePerTenant` (its plan's).
   */
  enter(tenant: string, admit: (release: Release) => void, refuse: (why: Refusal) => void, share?: number): void {
    const lane = this.laneOf(tenant, share ?? this.options.maxActivePerTenant);
    const queued = lane.waiting.length - lane.head;
    if (queued === 0 && this.active < this.options.maxActive && lane.active < lane.allowed) {
      admit(this.take(tenant, lane));
      return;
    }
    const oldest = lane.waiting[lane.head];
    const now = Date.now();
    const why: Refusal | undefined =
      queued >= this.options.maxQueuedPerTenant
        ? 'queue_full'
        : oldest !== undefined && now - oldest.since >= this.options.maxWaitMs
          ? 'queue_timeout'
          : undefined;
    if (why) {
      this.refusedCounts[why]++;
      this.forgetIfIdle(tenant, lane);
      refuse(why);
      return;
    }
    lane.waiting.push({ since: now, admit, refuse });
    this.waiting++;
    if (!this.inTurns.has(tenant)) {
      this.inTurns.add(tenant);
      this.turns.push(tenant);
    }
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  /** Stops the sweep timer (shutdown); waiters still queued are refused. */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const lane of this.lanes.values()) {
      for (let w = this.dequeue(lane); w; w = this.dequeue(lane)) w.refuse('queue_timeout');
    }
  }

  private laneOf(tenant: string, share: number): TenantLane {
    let lane = this.lanes.get(tenant);
    if (!lane) {
      // A tenant the process has not seen lately starts from what it cost when last seen.
      const costMs = this.recentCosts.get(tenant) ?? 0;
      this.lanes.set(tenant, (lane = { active: 0, share, costMs, allowed: this.allowedFor(costMs, share), waiting: [], head: 0 }));
    } else if (lane.share !== share) {
      // Its plan changed.
      lane.share = share;
      lane.allowed = this.allowedFor(lane.costMs, share);
    }
    return lane;
  }

  /** As many requests in progress as fit the tenant's budget of request time, within the floor and its share. */
  private allowedFor(costMs: number, share: number): number {
    const { minActivePerTenant, costUnitMs } = this.options;
    const fit = Math.floor((share * costUnitMs) / Math.max(costMs, costUnitMs));
    return Math.max(Math.min(minActivePerTenant, share), Math.min(share, fit));
  }

  private take(tenant: string, lane: TenantLane): Release {
    this.active++;
    lane.active++;
    const started = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      lane.active--;
      lane.costMs += COST_WEIGHT * (performance.now() - started - lane.costMs);
      lane.allowed = this.allowedFor(lane.costMs, lane.share);
      this.dispatch();
      this.forgetIfIdle(tenant, lane);
    };
  }

  /**
   * Hands free slots to waiting tenants in turn, each within its own share. The admitted are told
   * after the loop, so that a request finishing at once cannot re-enter it.
   */
  private dispatch(): void {
    const admitted: Array<() => void> = [];
    let passed = 0;
    while (this.active < this.options.maxActive && this.turns.length > 0 && passed < this.turns.length) {
      if (this.cursor >= this.turns.length) this.cursor = 0;
      const tenant = this.turns[this.cursor] as string;
      const lane = this.lanes.get(tenant);
      if (!lane || lane.head >= lane.waiting.length) {
        this.dropTurn(tenant);
        continue;
      }
      if (lane.active >= lane.allowed) {
        this.cursor++;
        passed++;
        continue;
      }
      const waiter = this.dequeue(lane) as Waiter;
      const release = this.take(tenant, lane);
      admitted.push(() => waiter.admit(release));
      passed = 0;
      if (lane.head >= lane.waiting.length) this.dropTurn(tenant);
      else this.cursor++;
    }
    for (const admit of admitted) admit();
  }

  private dropTurn(tenant: string): void {
    const at = this.turns.indexOf(tenant);
    if (at !== -1) {
      this.turns.splice(at, 1);
      if (at < this.cursor) this.cursor--;
    }
    this.inTurns.delete(tenant);
  }

  private dequeue(lane: TenantLane): Waiter | undefined {
    const waiter = lane.waiting[lane.head];
    if (!waiter) return undefined;
    lane.head++;
    this.waiting--;
    if (lane.head === lane.waiting.length) {
      lane.waiting = [];
      lane.head = 0;
    } else if (lane.head > 1024 && lane.head * 2 > lane.waiting.length) {
      lane.waiting = lane.waiting.slice(lane.head);
      lane.head = 0;
    }
    return waiter;
  }

  /** Refuses waiters that have waited maxWaitMs: a queue that old will not be served in time. */
  private sweep(): void {
    const limit = Date.now() - this.options.maxWaitMs;
    for (const [tenant, lane] of this.lanes) {
      while (lane.head < lane.waiting.length && (lane.waiting[lane.head] as Waiter).since <= limit) {
        const waiter = this.dequeue(lane) as Waiter;
        this.refusedCounts.queue_timeout++;
        waiter.refuse('queue_timeout');
      }
      if (lane.head >= lane.waiting.length) this.dropTurn(tenant);
      this.forgetIfIdle(tenant, lane);
    }
    if (this.waiting === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  private forgetIfIdle(tenant: string, lane: TenantLane): void {
    if (lane.active === 0 && lane.head >= lane.waiting.length && this.lanes.get(tenant) === lane) {
      this.lanes.delete(tenant);
      // Its cost is kept a while (bounded), or a slow tenant between bursts would start quick each time.
      if (lane.costMs > this.options.costUnitMs) this.recentCosts.set(tenant, lane.costMs);
      else this.recentCosts.delete(tenant);
    }
  }
}
