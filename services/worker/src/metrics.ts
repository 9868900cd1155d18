import { cachedReading } from '@quire/metrics';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Per queue: jobs waiting to start, and how long the oldest of them has waited (s). */
export type JobBacklog = Record<string, { depth: number; oldestAgeSeconds: number }>;

/**
 * The worker's Prometheus metrics: runs by queue and outcome, their durations, and the backlog
 * (global, read from every cluster's jobs table at most every 5 s: aggregate with max(), never
 * sum(); KEDA scales the workers on it).
 */
export class JobMetrics {
  private readonly runs: Counter<'queue' | 'status'>;
  private readonly duration: Histogram<'queue'>;

  constructor(registry: Registry, readBacklog: () => Promise<JobBacklog>, readSchedulerLag: () => Promise<number>) {
    const registers = [registry];
    this.runs = new Counter({
      name: 'quire_jobs_total',
      help: 'Job runs by queue and how they ended (finished, failed, retried)',
      labelNames: ['queue', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'quire_job_duration_seconds',
      help: 'Time of one job run',
      labelNames: ['queue'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1500],
      registers,
    });
    const backlog = cachedReading<JobBacklog>(readBacklog, 5_000, 2_000, {});
    new Gauge({
      name: 'quire_jobs_queue_depth',
      help: 'Jobs waiting to start, per queue, on every cluster (global)',
      labelNames: ['queue'],
      registers,
      async collect() {
        for (const [queue, b] of Object.entries(await backlog())) this.set({ queue }, b.depth);
      },
    });
    new Gauge({
      name: 'quire_jobs_oldest_age_seconds',
      help: 'How long the oldest job waiting to start has waited, per queue, on any cluster (global)',
      labelNames: ['queue'],
      registers,
      async collect() {
        for (const [queue, b] of Object.entries(await backlog())) this.set({ queue }, b.oldestAgeSeconds);
      },
    });
    const lag = cachedReading(readSchedulerLag, 5_000);
    new Gauge({
      name: 'quire_scheduler_lag_seconds',
      help: 'How late the scheduler is: seconds since the earliest due scheduled run no worker has taken, on any cluster (global; 0 when none is due)',
      registers,
      async collect() {
        this.set(await lag());
      },
    });
  }

  observe(queue: string, status: string, seconds: number): void {
    this.runs.inc({ queue, status });
    this.duration.observe({ queue }, seconds);
  }
}
