import { listen, withOperations, type Listening, type ServiceOperations } from '@quire/http';
import { PostgresWindowStore, RedisWindowStore, SiteRateLimiter, TenantGate } from '@quire/limits';
import { Redis } from 'ioredis';
import { RouteTable } from '@quire/metrics';
import type { Platform } from '@quire/tenancy';
import type { ServerResponse } from 'node:http';
import os from 'node:os';
import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { API_ROUTES, createApiListener } from './app';
import type { ApiConfig } from './config';
import { authenticate } from './middleware/authenticate';
import { attachRealtime } from './realtime/server';

export type RunningServer = Listening;

/** A request done within this counts as quick for fair admission (a read of one document, a page of a list). */
const QUICK_REQUEST_MS = 5;

/** Routers answered on the API's port before its own (the auth routes when one process runs both). */
export interface MountedBefore {
  handlers: RequestHandler[];
  /** Their route templates, for the request metrics. */
  routes: readonly string[];
}

/** Where realtime events travel between API processes (realtime/transport.ts). */
export interface RealtimeSettings {
  redisUrl?: string | undefined;
  /** The deployment's prefix for Redis keys and channels. */
  prefix: string;
}

/**
 * How many requests one tenant may have in progress: its share of the pool when they are quick,
 * half the cores (at least 1) when they are slow. What one tenant's heavy requests take from the
 * others is CPU, in Postgres and here, before it is connections: on 2 cores a flooding tenant
 * allowed 5 heavy lists at once raised a quiet tenant's p99 42-fold, allowed 2 7-18-fold, allowed 1
 * 2-fold (npm run bench -- fairness).
 */
export function tenantShares(poolSize: number, configured: number | undefined, cores: number = os.availableParallelism()): { quick: number; slow: number } {
  const quick = configured ?? Math.max(1, Math.ceil(poolSize / 2));
  return { quick, slow: Math.max(1, Math.min(quick, Math.floor(cores / 2))) };
}

/**
 * Where tenants' site rate-limit windows are counted across processes: Redis when REDIS_URL is set
 * (pushed every 250 ms), else the platform database (every second). While the store cannot be
 * reached each process counts only its own requests' time, and says so once.
 */
function siteRateLimiter(platform: Platform, realtime: RealtimeSettings, logger: Logger) {
  const redis = realtime.redisUrl ? new Redis(realtime.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }) : undefined;
  redis?.on('error', () => {
    // Reported by onStoreError when a sync fails; ioredis reconnects by itself.
  });
  const store = redis ? new RedisWindowStore(redis, realtime.prefix) : new PostgresWindowStore(platform.db);
  const limiter = new SiteRateLimiter({
    store,
    syncMs: redis ? 250 : 1000,
    onStoreError: (err) => logger.warn({ err }, 'site rate limits: the shared counts cannot be reached; each process counts its own until they can'),
  });
  return {
    limiter,
    async close() {
      await limiter.close();
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Starts the API service's HTTP server on `config.port` (0 picks a free port), with the realtime
 * endpoint (/socket.io) on the same port; rejects when the port cannot be bound.
 */
export async function startApiServer(
  platform: Platform,
  config: ApiConfig,
  logger: Logger,
  ops?: ServiceOperations,
  before: MountedBefore = { handlers: [], routes: [] },
  realtime: RealtimeSettings = { prefix: 'quire' },
): Promise<RunningServer> {
  const pool = config.platform.dbPoolSize;
  const shares = tenantShares(pool, config.tenantMaxConnections);
  const gate = new TenantGate({
    maxActive: pool,
    maxActivePerTenant: shares.quick,
    minActivePerTenant: shares.slow,
    costUnitMs: QUICK_REQUEST_MS,
    maxQueuedPerTenant: config.tenantQueueLength,
    maxWaitMs: config.tenantQueueWaitMs,
  });
  const siteRates = siteRateLimiter(platform, realtime, logger);
  const observer = ops?.metrics.tenantUsageObserver();
  if (observer) platform.usage.observe(observer);
  platform.startMetering({ flushMs: config.platform.usageFlushMs, measureMs: config.platform.usageMeasureMs }, (err) =>
    logger.warn({ err }, 'usage metering: the platform database could not be reached; counts are kept for the next try'),
  );
  ops?.metrics.watchAdmission(() => ({ ...gate.stats, refused: { ...gate.stats.refused, rate_limit: siteRates.limiter.refused } }));
  const app = createApiListener({
    platform,
    gate,
    siteRates: siteRates.limiter,
    config: { ...config, developerMode: config.platform.developerMode, trustProxy: config.platform.trustProxy },
    logger,
    before: before.handlers,
  });
  // Health and request metrics in front of the app (the runtime's); without them it serves only the API.
  const tenantOf = (res: ServerResponse): string | undefined => {
    // Express gives the response its locals; a request refused before tenant resolution has no tenant.
    const locals = (res as Partial<Response>).locals as Partial<Express.Locals> | undefined;
    return locals?.tenant?.name;
  };
  const listener = ops ? withOperations(ops, new RouteTable([...before.routes, ...API_ROUTES]), app, tenantOf) : app;
  const listening = await listen(listener, { port: config.port, host: config.host });
  const sockets = await attachRealtime(listening.server, platform, authenticate(platform, logger), {
    redisUrl: realtime.redisUrl,
    prefix: realtime.prefix,
    logger,
    registry: ops?.metrics.registry,
  });
  return {
    ...listening,
    // Sockets go first: an open WebSocket is not a request the HTTP server would wait for.
    close: async (timeoutMs?: number) => {
      await sockets.close();
      await listening.close(timeoutMs);
      gate.close();
      await siteRates.close();
    },
  };
}
