import { optionalText, readSettings, type Setting, type SettingsOf } from '@quire/config';
import { z } from 'zod';

/** The worker service's settings: name -> environment variable and schema. */
const workerSettings = {
  /** BullMQ on this Redis when set (`quire serve worker` processes run the jobs; API and CLI only enqueue); otherwise jobs run in-process. */
  redisUrl: ['REDIS_URL', optionalText],
  /** Jobs run at once per queue (short, default, long) in one process. */
  concurrency: ['WORKER_CONCURRENCY', z.coerce.number().int().min(1).max(200).default(8)],
  /** How many picked jobs of a queue may wait in Redis; the rest wait in Postgres, where picking is fair between tenants. */
  queueWindow: ['JOBS_QUEUE_WINDOW', z.coerce.number().int().min(1).max(10_000).default(32)],
  /** How often the job tables are looked at without a wake-up (backoffs falling due, lost jobs). */
  sweepIntervalMs: ['JOBS_SWEEP_INTERVAL_MS', z.coerce.number().int().min(10).default(2000)],
  /** BullMQ's lock on a running job: a worker gone (kill -9) this long has its job run again by another. */
  lockMs: ['JOBS_LOCK_MS', z.coerce.number().int().min(500).default(30_000)],
  /**
   * The platform's mail server, for tenants without an outgoing Email Account:
   * `smtp://[user[:password]@]host[:port][?starttls=required]` or `smtps://…` (implicit TLS).
   */
  smtpUrl: ['SMTP_URL', optionalText],
  /** The operations port of a process serving only the worker when METRICS_PORT is unset. */
  port: ['WORKER_PORT', z.coerce.number().int().min(0).max(65535).optional()],
} as const satisfies Record<string, Setting>;

export type WorkerConfig = SettingsOf<typeof workerSettings>;

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return readSettings(workerSettings, env);
}
