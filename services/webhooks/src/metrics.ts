import type { DeliveryObserver } from '@quire/webhooks';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The webhooks service's Prometheus metrics: deliveries by outcome, attempts, delivery latency,
 * lag from commit to first attempt, and queue depth (outbox pending + queue jobs).
 */
export class WebhookMetrics implements DeliveryObserver {
  readonly registry = new Registry();
  private readonly deliveries: Counter<'outcome'>;
  private readonly attempts: Counter;
  private readonly duration: Histogram;
  private readonly lag: Histogram;

  constructor(depth: { outbox: () => Promise<number>; queue?: () => Promise<number> }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'quire_webhooks_' });
    this.deliveries = new Counter({
      name: 'quire_webhook_deliveries_total',
      help: 'Delivery attempts by outcome (delivered, retrying, failed, refused, disabled, cancelled)',
      labelNames: ['outcome'],
      registers,
    });
    this.attempts = new Counter({ name: 'quire_webhook_attempts_total', help: 'HTTP delivery attempts made', registers });
    this.duration = new Histogram({
      name: 'quire_webhook_delivery_duration_seconds',
      help: 'Time of one delivery attempt (request to response)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
      registers,
    });
    this.lag = new Histogram({
      name: 'quire_webhook_lag_seconds',
      help: 'From the event being written (commit) to its first delivery attempt',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    new Gauge({
      name: 'quire_webhook_outbox_pending',
      help: 'Events waiting for delivery in the outbox (due or scheduled for a retry)',
      registers,
      async collect() {
        this.set(await depth.outbox());
      },
    });
    if (depth.queue) {
      const queue = depth.queue;
      new Gauge({
        name: 'quire_webhook_queue_depth',
        help: 'BullMQ jobs waiting, delayed or active',
        registers,
        async collect() {
          this.set(await queue());
        },
      });
    }
  }

  attempted(report: { outcome: string; durationMs: number; attempt: number; lagMs: number | undefined }): void {
    this.deliveries.inc({ outcome: report.outcome });
    if (report.outcome !== 'cancelled') {
      this.attempts.inc();
      this.duration.observe(report.durationMs / 1000);
    }
    if (report.lagMs !== undefined) this.lag.observe(report.lagMs / 1000);
  }
}
