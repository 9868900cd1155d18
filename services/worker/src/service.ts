import { hostname } from 'node:os';
import type { MethodSettings } from '@quire/apps';
import { smtpOptionsFromUrl } from '@quire/email';
import { finishesWithin, type ServiceOperations } from '@quire/http';
import {
  heartbeat,
  HEARTBEAT_MS,
  InProcessJobRunner,
  QUEUE_NAMES,
  QueueJobRunner,
  readBacklog,
  removeWorker,
  schedulerLagSeconds,
  WorkerStats,
  type JobLanes,
  type JobRunDeps,
} from '@quire/jobs';
import type { Platform } from '@quire/tenancy';
import { platformOutboxes } from '@quire/webhooks-service';
import type { Logger } from 'pino';
import type { WorkerConfig } from './config';
import { jobContexts } from './job-context';
import { JobMetrics, type JobBacklog } from './metrics';

export interface WorkerService {
  metrics: JobMetrics;
  /** Woken by this process's own enqueues (without Redis). */
  wake(): void;
  /**
   * Takes no more jobs and lets those running finish for up to `timeoutMs`; what still runs then
   * is left to BullMQ (its lock runs out and another worker runs it again) or, in-process, to its
   * lease.
   */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * `quire serve worker`: with REDIS_URL, BullMQ workers fed fairly from every cluster's jobs table
 * (any number of these processes); without, an in-process runner doing the same picking (the
 * all-in-one `npm start`). Metrics on the process's operations port.
 */
export function startWorkerService(
  platform: Platform,
  config: WorkerConfig,
  methodSettings: MethodSettings,
  logger: Logger,
  ops: ServiceOperations,
  queuePrefix: string,
): WorkerService {
  // A mistyped SMTP_URL stops the start, not every flush.
  if (config.smtpUrl) smtpOptionsFromUrl(config.smtpUrl);
  const onError = (e: unknown, cluster?: string) => logger.warn({ err: e, ...(cluster === undefined ? {} : { cluster }) }, 'background jobs problem');
  const clusters = platformOutboxes(platform, onError);
  // A suspended or read-only tenant's jobs wait for it to be active again (quire tenant suspend).
  const pausedTenants = () => platform.tenants.paused();
  const lanes: JobLanes = {
    lanes: () => clusters.outboxes(),
    laneOf: (cluster) => ({ cluster, db: platform.clusters.database(cluster) }),
  };
  const metrics = new JobMetrics(
    ops.metrics.registry,
    () => backlogOf(lanes),
    async () => Math.max(0, ...(await Promise.all((await lanes.lanes()).map((l) => schedulerLagSeconds(l.db, pausedTenants()).catch(() => 0))))),
  );
  const stats = new WorkerStats();
  const deps: JobRunDeps = {
    apps: platform.apps,
    contextFor: jobContexts(platform, methodSettings),
    worker: `${hostname()}:${process.pid}`,
    observe: (queue, status, seconds) => metrics.observe(queue, status, seconds),
    stats,
  };
  const stopHeartbeat = heartbeats(lanes, deps.worker, stats, onError);
  if (config.redisUrl) {
    const runner = new QueueJobRunner(lanes, deps, {
      redisUrl: config.redisUrl,
      prefix: queuePrefix,
      concurrency: config.concurrency,
      window: config.queueWindow,
      sweepIntervalMs: config.sweepIntervalMs,
      lockMs: config.lockMs,
      pausedTenants,
      onError,
    });
    runner.start();
    return {
      metrics,
      wake: () => runner.wake(),
      async close(timeoutMs = 20_000) {
        if (!(await finishesWithin(runner.close(), timeoutMs))) await runner.close(true);
        await stopHeartbeat();
      },
    };
  }
  const runner = new InProcessJobRunner(lanes, deps, { concurrency: config.concurrency, sweepIntervalMs: config.sweepIntervalMs, pausedTenants, onError });
  const unsubscribe = platform.jobs.onEnqueued(() => runner.wake());
  runner.start();
  return {
    metrics,
    wake: () => runner.wake(),
    async close(timeoutMs = 20_000) {
      unsubscribe();
      await finishesWithin(runner.close(), timeoutMs);
      await stopHeartbeat();
    },
  };
}

/**
 * This worker's "RQ Worker" row on every cluster it serves, now, every HEARTBEAT_MS and when it turns busy or idle; removed
 * when it stops (a killed one's row is shown no more a minute after its last beat).
 */
function heartbeats(lanes: JobLanes, name: string, stats: WorkerStats, onError: (e: unknown, cluster?: string) => void): () => Promise<void> {
  const report = () => ({
    name,
    hostname: hostname(),
    pid: process.pid,
    queues: QUEUE_NAMES.join(','),
    startedAt: stats.startedAt,
    running: stats.running,
    finished: stats.finished,
    failed: stats.failed,
    workingSeconds: stats.workingSeconds,
  });
  let beatAt = 0;
  let busy = false;
  let beating: Promise<void> | undefined;
  const beat = () => {
    beatAt = Date.now();
    busy = stats.running > 0;
    beating ??= (async () => {
      for (const lane of await lanes.lanes().catch(() => [])) await heartbeat(lane.db, report()).catch((e: unknown) => onError(e, lane.cluster));
    })().finally(() => (beating = undefined));
  };
  beat();
  // Every HEARTBEAT_MS, and within a second of turning busy or idle.
  const timer = setInterval(() => {
    if (Date.now() - beatAt >= HEARTBEAT_MS || stats.running > 0 !== busy) beat();
  }, 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await beating; // the database closes after this
    for (const lane of await lanes.lanes().catch(() => [])) await removeWorker(lane.db, name).catch(() => {});
  };
}

async function backlogOf(lanes: JobLanes): Promise<JobBacklog> {
  const out: JobBacklog = { short: { depth: 0, oldestAgeSeconds: 0 }, default: { depth: 0, oldestAgeSeconds: 0 }, long: { depth: 0, oldestAgeSeconds: 0 } };
  for (const lane of await lanes.lanes()) {
    for (const r of await readBacklog(lane.db).catch(() => [])) {
      const b = (out[r.queue] ??= { depth: 0, oldestAgeSeconds: 0 });
      b.depth += r.depth;
      b.oldestAgeSeconds = Math.max(b.oldestAgeSeconds, r.oldestAgeSeconds);
    }
  }
  return out;
}
