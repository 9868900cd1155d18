import { DEFAULT_CLUSTER, type Platform } from '@quire/tenancy';
import type { Outbox } from '@quire/webhooks';

/**
 * The platform's clusters as delivery sees them (DeliveryDeps.outboxes/outboxOf): each one's
 * outbox, and backlog readings over all of them. A cluster that cannot be opened or read is
 * reported and left out; the others go on.
 */

/** The cluster registry is re-read by the sweep at most this often (the platform also re-reads it when `quire cluster add` notifies, and periodically). */
const REGISTRY_REFRESH_MS = 5000;
/** A cluster's backlog reading is given up after this: an unreachable cluster must not hold up the others' metrics. */
const READING_TIMEOUT_MS = 5000;
/** The same cluster's failure to open is reported at most this often (the sweep asks every few seconds). */
const REPORT_EVERY_MS = 60_000;

type OutboxDb = Outbox['db'];

export interface PlatformOutboxes {
  /** Every registered cluster's outbox, `default` first (the registry re-read now and then). */
  outboxes: () => Promise<Outbox[]>;
  /** The outbox of a tenant this process knows (its cluster's), else undefined. No query. */
  outboxOf: (tenant: string) => Outbox | undefined;
  /** `read` of every cluster's outbox that answers in time, summed. */
  sum: (read: (db: OutboxDb) => Promise<number>) => Promise<number>;
  /** …or the largest (0 with none). */
  max: (read: (db: OutboxDb) => Promise<number>) => Promise<number>;
}

export function platformOutboxes(platform: Platform, onError: (e: unknown, cluster?: string) => void): PlatformOutboxes {
  /** One Outbox per cluster and pool, reused while the pool is the same (a pool closed while idle is opened again). */
  const known = new Map<string, Outbox>();
  const reported = new Map<string, number>();
  let refreshedAt = -Infinity;

  const outboxOn = (cluster: string): Outbox => {
    const db = platform.clusters.database(cluster);
    let outbox = known.get(cluster);
    if (outbox?.db !== db) known.set(cluster, (outbox = { cluster, db }));
    return outbox;
  };

  async function outboxes(): Promise<Outbox[]> {
    if (performance.now() - refreshedAt >= REGISTRY_REFRESH_MS) {
      refreshedAt = performance.now();
      // Tiny table; when the platform database does not answer, the registry as last read.
      await platform.clusters.refresh().catch((e: unknown) => onError(e));
    }
    const all = [outboxOn(DEFAULT_CLUSTER)];
    for (const { name } of platform.clusters.list()) {
      if (name === DEFAULT_CLUSTER) continue;
      try {
        all.push(outboxOn(name));
        reported.delete(name);
      } catch (e) {
        // Its URL could not be resolved (an env: or file: reference missing here): reported, now and then.
        const last = reported.get(name);
        if (last === undefined || performance.now() - last >= REPORT_EVERY_MS) {
          reported.set(name, performance.now());
          onError(e, name);
        }
      }
    }
    return all;
  }

  async function readings(read: (db: OutboxDb) => Promise<number>): Promise<number[]> {
    const all = await outboxes();
    const values = await Promise.all(
      all.map((o) => withTimeout(read(o.db), READING_TIMEOUT_MS, o.cluster).catch((e: unknown) => (onError(e, o.cluster), undefined))),
    );
    return values.filter((v): v is number => v !== undefined);
  }

  return {
    outboxes,
    outboxOf(tenant) {
      const cluster = platform.tenants.get(tenant)?.cluster;
      if (cluster === undefined) return undefined;
      try {
        return outboxOn(cluster);
      } catch {
        return undefined; // looked for everywhere instead (and reported by the sweep)
      }
    },
    async sum(read) {
      return (await readings(read)).reduce((a, b) => a + b, 0);
    },
    async max(read) {
      return Math.max(0, ...(await readings(read)));
    },
  };
}

function withTimeout<T>(work: Promise<T>, ms: number, cluster: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`cluster ${cluster} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timedOut]).finally(() => clearTimeout(timer));
}
