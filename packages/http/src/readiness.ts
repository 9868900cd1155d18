/**
 * One readiness check: resolves to `undefined` when fine, or a short reason when not (e.g.
 * "behind: run quire migrate"). A throw or a time-out counts as not ready.
 */
export type ReadinessCheck = () => Promise<string | undefined>;

/**
 * Checks named anew at each evaluation (what the process has open changes), reported beside the
 * others without deciding readiness.
 */
export type AdvisoryChecks = () => Iterable<readonly [string, ReadinessCheck]>;

export interface ReadinessReport {
  ready: boolean;
  /** Every check by name: "ok" or why not (an advisory one's "why not" leaves the process ready). */
  checks: Record<string, string>;
}

export interface ReadinessOptions {
  /** A check that has not answered by then fails (a hung database must not hang the probe). */
  checkTimeoutMs?: number;
  /** Probes from a load balancer and the kubelet within this window share one evaluation. */
  cacheMs?: number;
}

const SHUTTING_DOWN = 'shutting down';

/**
 * Whether this process should be sent traffic: named checks (database, schema, redis …) plus the
 * shutdown flag, which turns it unready at once on SIGTERM so load balancers stop sending.
 */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly advisories: AdvisoryChecks[] = [];
  private readonly checkTimeoutMs: number;
  private readonly cacheMs: number;
  private stopping = false;
  private last: { at: number; report: Promise<ReadinessReport> } | undefined;
  private readonly listeners = new Set<(ready: boolean) => void>();

  constructor(options: ReadinessOptions = {}) {
    this.checkTimeoutMs = options.checkTimeoutMs ?? 2000;
    this.cacheMs = options.cacheMs ?? 500;
  }

  add(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
    this.last = undefined;
  }

  /**
   * Checks reported in the body that never make the process unready: what only part of its traffic
   * needs (one cluster of several), which taking the process out of its load balancer would not
   * mend but would stop the rest of its traffic too.
   */
  addAdvisory(checks: AdvisoryChecks): void {
    this.advisories.push(checks);
    this.last = undefined;
  }

  /** From now on every evaluation says "shutting down". */
  markShuttingDown(): void {
    this.stopping = true;
    this.last = undefined;
  }

  /** Told the outcome of every fresh evaluation (the `quire_ready` gauge). */
  onEvaluated(listener: (ready: boolean) => void): void {
    this.listeners.add(listener);
  }

  evaluate(): Promise<ReadinessReport> {
    const now = Date.now();
    if (this.last && now - this.last.at < this.cacheMs) return this.last.report;
    const report = this.run();
    this.last = { at: now, report };
    return report;
  }

  private async run(): Promise<ReadinessReport> {
    const advisory = this.advisories.flatMap((list) => [...list()]);
    const [checks, notes] = await Promise.all([this.outcomes([...this.checks]), this.outcomes(advisory)]);
    if (this.stopping) checks.shutdown = SHUTTING_DOWN;
    const ready = Object.values(checks).every((v) => v === 'ok');
    for (const listener of this.listeners) listener(ready);
    return { ready, checks: { ...checks, ...notes } };
  }

  /** Each check's outcome by name, run together: "ok" or why not. */
  private async outcomes(checks: ReadonlyArray<readonly [string, ReadinessCheck]>): Promise<Record<string, string>> {
    const outcomes = await Promise.all(checks.map(([, check]) => this.bounded(check)));
    return Object.fromEntries(checks.map(([name], i) => [name, outcomes[i] ?? 'ok']));
  }

  private async bounded(check: ReadinessCheck): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${this.checkTimeoutMs} ms`), this.checkTimeoutMs);
    });
    try {
      return await Promise.race([check(), timeout]);
    } catch {
      // Served to anyone who asks on a main port: never a driver's message (addresses, SQL).
      return 'failed';
    } finally {
      clearTimeout(timer);
    }
  }
}
