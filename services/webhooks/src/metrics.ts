import { cachedReading } from '@quire/metrics';
import type { DeliveryObserver } from '@quire/webhooks';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface BacklogReadings {
  /** Events pending in the outboxes, summed over the clusters (a query each: read at most every 15 s). */
  outbox: () => Promise<number>;
  /** Seconds the oldest pending event has waited, on any cluster (a query each: read at most every 15 s). */
  oldestAge: () => Promise<number>;
  /** Events this process has claimed and not yet recorded (with Redis). */
  queue?: () => Promise<number>;
}

/**
 * The webhooks service's Prometheus metrics, on the process's registry: deliveries by outcome,
 * attempts, delivery latency, lag from commit to first attempt, and the backlog. The backlog gauges
 * are global (every replica reports the same outboxes, every cluster's): aggregate them with max(), never sum().
 */
export class WebhookMetrics implements DeliveryObserver {
  private readonly deliveries: Counter<'outcome'>;
  private readonly attempts: Counter;
  private readonly duration: Histogram;
  private readonly lag: Histogram;

  constructor(registry: Registry, backlog: BacklogReadings) {
    const registers = [registry];
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
    const outbox = cachedReading(backlog.outbox);
    new Gauge({
      name: 'quire_webhook_outbox_pending',
      help: 'Events waiting for delivery in the outboxes of every cluster, due or scheduled for a retry (global; read at most every 15 s)',
      registers,
      async collect() {
        this.set(await outbox());
      },
    });
    const oldestAge = cachedReading(backlog.oldestAge);
    new Gauge({
      name: 'quire_webhook_oldest_pending_age_seconds',
      help: 'How long the oldest undelivered event on any cluster has waited (global; read at most every 15 s)',
      registers,
      async collect() {
        this.set(await oldestAge());
      },
    });
    if (backlog.queue) {
      const queue = cachedReading(backlog.queue, 5_000);
      new Gauge({
        name: 'quire_webhook_queue_depth',
        help: 'Events this webhooks process has claimed and not yet recorded (in flight or waiting for their log write)',
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
