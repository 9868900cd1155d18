import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { makePrincipal } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import { InProcessRunner, pendingCount, QueueWorker, type DeliveryDeps } from '@quire/webhooks';
import type { Logger } from 'pino';
import type { WebhooksConfig } from './config';
import { WebhookMetrics } from './metrics';

const ADMIN = makePrincipal('Administrator', ['Administrator', 'System Manager']);

export interface WebhooksService {
  /** Wakes in-process delivery for events just committed (no-op with Redis: the queue carries them). */
  wake(): void;
  port: number;
  metrics: WebhookMetrics;
  close(): Promise<void>;
}

/**
 * `quire serve webhooks`: with REDIS_URL a BullMQ worker (any number of these processes), else an
 * in-process runner that sweeps the outbox. Both use the same delivery code; both serve /metrics
 * and /healthz on WEBHOOKS_PORT.
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
    runner = new InProcessRunner(deps, { concurrency: config.concurrency, sweepIntervalMs: config.sweepIntervalMs, onError });
    runner.start();
  }

  const server = http.createServer((req, res) => {
    if (req.url === '/metrics') {
      metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
      return;
    }
    if (req.url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"status":"ok"}');
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port ?? (standalone ? 8001 : 0), () => resolve());
  });
  return {
    wake: () => runner?.wake(),
    port: (server.address() as AddressInfo).port,
    metrics,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runner?.close();
      await worker?.close();
    },
  };
}
