import { listen, operationsListener } from '@quire/http';
import { makePrincipal } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import { InProcessRunner, pendingCount, QueueWorker, type DeliveryDeps } from '@quire/webhooks';
import type { Logger } from 'pino';
import type { WebhooksConfig } from './config';
import { WebhookMetrics } from './metrics';

const ADMIN = makePrincipal('Administrator', ['Administrator', 'System Manager']);

export interface WebhooksService {
  port: number;
  metrics: WebhookMetrics;
  close(): Promise<void>;
}

/**
 * `quire serve webhooks`: with REDIS_URL a BullMQ worker (any number of these processes), else an
 * in-process runner that sweeps the outbox and is woken by this process's own commits. Both use the
 * same delivery code; both serve /metrics and /healthz on WEBHOOKS_PORT.
 */
export async function startWebhooksService(platform: Platform, config: WebhooksConfig, logger: Logger, standalone = true): Promise<WebhooksService> {
  let worker: QueueWorker | undefined;
  const metrics = new WebhookMetrics({ outbox: () => pendingCount(platform.db), queue: () => worker?.queueDepth() ?? Promise.resolve(0) });
  const deps: DeliveryDeps = {
    db: platform.db,
    async contextFor(name) {
      const tenant = platform.tenants.get(name) ?? (await platform.tenants.refresh(), platform.tenants.get(name));
      return tenant ? platform.context(tenant, ADMIN) : undefined;
    },
    allow: config.allowNets,
    policy: config.retry,
    leaseMarginMs: config.leaseMarginMs,
    observer: metrics,
  };
  const onError = (e: unknown) => logger.warn({ err: e }, 'webhook delivery problem');
  let runner: InProcessRunner | undefined;
  let unsubscribe = (): void => {};
  if (config.redisUrl) {
    worker = new QueueWorker(deps, {
      redisUrl: config.redisUrl,
      concurrency: config.concurrency,
      sweepIntervalMs: config.sweepIntervalMs,
      lockDurationMs: config.lockDurationMs,
      onError,
    });
    worker.start();
  } else {
    const inProcess = new InProcessRunner(deps, { concurrency: config.concurrency, sweepIntervalMs: config.sweepIntervalMs, onError });
    unsubscribe = platform.changes.onWebhookEvents(() => inProcess.wake());
    inProcess.start();
    runner = inProcess;
  }

  const server = await listen(operationsListener(metrics.registry), { port: config.port ?? (standalone ? 8001 : 0) });
  return {
    port: server.port,
    metrics,
    async close() {
      unsubscribe();
      await server.close();
      await runner?.close();
      await worker?.close();
    },
  };
}
