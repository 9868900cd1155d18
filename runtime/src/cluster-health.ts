import { isConnectionFailure, type Database } from '@quire/db';
import type { ReadinessCheck } from '@quire/http';
import { DEFAULT_CLUSTER } from '@quire/tenancy';

export interface ClusterHealthOptions {
  /** How long a cluster's answer is reused: /readyz probes and /metrics scrapes share it. */
  ttlMs?: number;
  /** A cluster that has not answered by then is reported down: a hung cluster never holds a probe or a scrape. */
  timeoutMs?: number;
}

/**
 * Whether each cluster this process has a pool open to answers a `SELECT 1` through that pool, for
 * /readyz (`cluster <name>`) and `quire_db_cluster_up`. Probing goes through `opened()`, not
 * `Clusters.database()`, so it never keeps an idle cluster's pool open; at most one probe per
 * cluster is under way (a hung one's waits out the pool's connect timeout).
 */
export class ClusterHealth {
  private readonly ttlMs: number;
  private readonly timeoutMs: number;
  /** Each pool's last answer (a pool opened again is another Database: asked afresh). */
  private readonly answers = new WeakMap<Database, { at: number; state: Promise<string | undefined> }>();
  private readonly pending = new WeakMap<Database, Promise<string | undefined>>();

  constructor(
    private readonly opened: () => ReadonlyArray<readonly [string, Database]>,
    options: ClusterHealthOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 1000;
    // Under Readiness' own 2 s, so /readyz says what this found rather than that the check timed out.
    this.timeoutMs = options.timeoutMs ?? 1500;
  }

  /** `quire_db_cluster_up`: each cluster open now, and whether it answered. */
  async up(): Promise<ReadonlyMap<string, boolean>> {
    const open = this.opened();
    const states = await Promise.all(open.map(([, db]) => this.state(db)));
    // A pool closed as idle while asked failed for that reason alone: it is not reported.
    const still = new Set(this.opened().map(([name]) => name));
    return new Map(open.map(([name], i) => [name, states[i] === undefined] as const).filter(([name]) => still.has(name)));
  }

  /** A /readyz check per cluster open now but the platform database (that is the `database` check). */
  checks(): Array<[string, ReadinessCheck]> {
    return this.opened()
      .filter(([name]) => name !== DEFAULT_CLUSTER)
      .map(([name, db]) => [`cluster ${name}`, () => this.state(db)]);
  }

  /** undefined when the cluster answered within ttlMs, else why not (short and generic: /readyz is public). */
  private state(db: Database): Promise<string | undefined> {
    const now = performance.now();
    const last = this.answers.get(db);
    if (last && now - last.at < this.ttlMs) return last.state;
    const state = this.bounded(db);
    this.answers.set(db, { at: now, state });
    return state;
  }

  private async bounded(db: Database): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${this.timeoutMs} ms`), this.timeoutMs);
    });
    try {
      return await Promise.race([this.probe(db), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The probe under way on `db`, or a new one. */
  private probe(db: Database): Promise<string | undefined> {
    let probe = this.pending.get(db);
    if (!probe) {
      probe = db
        .query('SELECT 1')
        .then(
          () => undefined,
          (e: unknown) => (isConnectionFailure(e) ? 'unreachable' : 'failed'),
        )
        .finally(() => this.pending.delete(db));
      this.pending.set(db, probe);
    }
    return probe;
  }
}
