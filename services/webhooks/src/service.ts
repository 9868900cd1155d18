import { finishesWithin, type ServiceOperations } from '@quire/http';
import { makePrincipal } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import { InProcessRunner, oldestPendingAgeSeconds, pendingCount, QueueWorker, type DeliveryDeps, type DispatcherOptions } from '@quire/webhooks';
import type { Logger } from 'pino';
import type { WebhooksConfig } from './config';
import { WebhookMetrics } from './metrics';
import { platformOutboxes } from './outboxes';

const ADMIN = makePrincipal('Administrator', ['Administrator', 'System Manager']);

export interface WebhooksService {
  metrics: WebhookMetrics;
  /**
   * Stops taking events and lets deliveries in flight finish for up to `timeoutMs`; what is still in
   * flight then is dropped here and keeps its outbox lease, so another worker retakes it.
   */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * `quire serve webhooks`: with REDIS_URL a worker woken through Redis (any number of these
 * processes), else an in-process runner that sweeps the outboxes and is woken by this process's own
 * commits. Both deliver with the same batched code (claims, requests, bookkeeping), from every
 * cluster's outbox (each tenant's events are on its own cluster); their metrics go on the
 * process's operations port, the backlog summed (or the oldest) over the clusters.
 */
export function startWebhooksService(platform: Platform, config: WebhooksConfig, logger: Logger, ops: ServiceOperations, queuePrefix: string): WebhooksService {
  let worker: QueueWorker | undefined;
  const onError = (e: unknown, cluster?: string) => logger.warn({ err: e, ...(cluster === undefined ? {} : { cluster }) }, 'webhook delivery problem');
  const outboxes = platformOutboxes(platform, onError);
  const metrics = new WebhookMetrics(ops.metrics.registry, {
    outbox: () => outboxes.sum(pendingCount),
    oldestAge: () => outboxes.max(oldestPendingAgeSeconds),
    ...(config.redisUrl ? { queue: () => worker?.queueDepth() ?? Promise.resolve(0) } : {}),
  });
  const deps: DeliveryDeps = {
    db: platform.db,
    outboxes: outboxes.outboxes,
    outboxOf: outboxes.outboxOf,
    async contextFor(name) {
      const tenant = platform.tenants.get(name) ?? (await platform.tenants.refreshOne(name), platform.tenants.get(name));
      return tenant ? platform.context(tenant, ADMIN) : undefined;
    },
    // A suspended or read-only tenant's events wait for it to be active again (quire tenant suspend).
    pausedTenants: () => platform.tenants.paused(),
    allow: config.allowNets,
    policy: config.retry,
    leaseMarginMs: config.leaseMarginMs,
    observer: metrics,
  };
  // The same delivery, in-process or fed through Redis.
  const dispatching: DispatcherOptions = {
    concurrency: config.concurrency,
    ...(config.tenantMaxInFlight === undefined ? {} : { tenantMaxInFlight: config.tenantMaxInFlight }),
    sweepIntervalMs: config.sweepIntervalMs,
    onError,
  };
  if (config.redisUrl) {
    const queueWorker = new QueueWorker(deps, {
      redisUrl: config.redisUrl,
      prefix: queuePrefix,
      ...dispatching,
    });
    queueWorker.start();
    worker = queueWorker;
    return {
      metrics,
      async close(timeoutMs = 20_000) {
        if (!(await finishesWithin(queueWorker.close(), timeoutMs))) await queueWorker.close(true);
      },
    };
  }
  const runner = new InProcessRunner(deps, dispatching);
  const unsubscribe = platform.changes.onWebhookEvents((tenant) => runner.wake(tenant));
  runner.start();
  return {
    metrics,
    async close(timeoutMs = 20_000) {
      unsubscribe();
      await finishesWithin(runner.close(), timeoutMs);
    },
  };
}
