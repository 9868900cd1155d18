import type { Database } from '@quire/db';
import type { Readiness } from '@quire/http';
import type { Redis } from 'ioredis';
import { releaseStatus } from '@quire/tenancy';

export interface ReadinessDependencies {
  /** This build's release fingerprint (releaseOf(apps)): the schema every tenant must be at. */
  release: string;
  /** Set when this process needs Redis (BullMQ) to do its job. */
  redisUrl?: string | undefined;
}

/**
 * The checks behind /readyz: the database answers, its schema is at this build's version, Redis
 * answers when the process needs it. Reasons are short and generic: they are served to anyone who
 * asks on the main port. Returns what closes the checks' own connections.
 */
export function addReadinessChecks(readiness: Readiness, db: Database, deps: ReadinessDependencies): () => Promise<void> {
  readiness.add('database', async () => {
    try {
      await db.query('SELECT 1');
      return undefined;
    } catch {
      return 'unreachable';
    }
  });
  // Once at this build's release, always at it (migrations only go forward; a later release's
  // expand steps keep this one's schema working), so the check stops querying.
  let current = false;
  readiness.add('schema', async () => {
    if (current) return undefined;
    const status = await releaseStatus(db, deps.release);
    current = status.platformReady && status.releaseComplete;
    if (current) return undefined;
    return status.platformReady ? `behind: run quire migrate (${status.pendingTenants} tenants pending)` : 'behind: run quire migrate';
  });
  if (!deps.redisUrl) return async () => {};
  const redis = redisCheck(deps.redisUrl);
  readiness.add('redis', redis.check);
  return redis.close;
}

/** PING on a connection of its own that never queues commands while Redis is away. */
function redisCheck(url: string): { check: () => Promise<string | undefined>; close: () => Promise<void> } {
  let client: Promise<Redis> | undefined;
  const connect = async (): Promise<Redis> => {
    const { Redis } = await import('ioredis');
    const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectionName: 'quire-readiness' });
    redis.on('error', () => {}); // reported through the check, not as an unhandled error
    await redis.connect();
    return redis;
  };
  return {
    async check() {
      try {
        // A first connection that fails is tried afresh by the next check.
        const redis = await (client ??= connect().catch((e: unknown) => {
          client = undefined;
          throw e;
        }));
        await redis.ping();
        return undefined;
      } catch {
        return 'unreachable';
      }
    },
    async close() {
      const redis = await client?.catch(() => undefined);
      redis?.disconnect();
    },
  };
}
