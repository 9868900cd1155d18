import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { JobQueueName } from '@quire/documents';
import { Feeder, type FedJob } from './feeder';
import type { JobLanes } from './job-lanes';
import { QUEUE_NAMES } from './queues';
import { runJob, type JobRunDeps } from './run-job';
import { jobsWakeChannel } from './wake';

export interface QueueRunnerOptions {
  redisUrl: string;
  /** The deployment's key prefix: two deployments sharing a Redis never see each other's jobs. */
  prefix: string;
  /** Jobs run at once in this process, per queue. */
  concurrency: number;
  /** How many jobs of a queue may wait in Redis at once; the rest wait in Postgres, where picking is fair. */
  window: number;
  sweepIntervalMs: number;
  /** BullMQ's lock on a running job, renewed while its worker lives; a worker gone for this long has its job run elsewhere. */
  lockMs: number;
  /** Tenants whose jobs and scheduled events wait (suspended or read-only). */
  pausedTenants?: () => readonly string[];
  onError?: (e: unknown, cluster?: string) => void;
}

/** What a BullMQ job carries: where its row is. */
interface QueuedJobData {
  cluster: string;
  id: string;
  tenant: string;
}

/** A job handed to BullMQ and not started within this (Redis lost it, or it waits behind a stuck queue) is handed over again: the same id, so never twice. */
const LOST_AFTER_SECONDS = 120;

/** BullMQ's name for one of Frappe's queues. */
export function bullQueueName(queue: JobQueueName): string {
  return `quire-jobs-${queue}`;
}

/**
 * `quire serve worker` with Redis. Postgres keeps every job and decides whose runs next (fair
 * picking, feeder.ts); each queue's BullMQ list holds only a small window of picked jobs, so a
 * newcomer tenant's job is never behind another's backlog. BullMQ gives the running: one worker
 * per job (its lock), a stalled job (its worker killed) run again by another, graceful close.
 * Enqueues anywhere wake the feeders through the deployment's channel.
 */
export class QueueJobRunner {
  private readonly feeder: Feeder;
  private readonly queues = new Map<JobQueueName, Queue<QueuedJobData>>();
  private readonly workers: Worker<QueuedJobData>[] = [];
  /** The workers' own connections (BullMQ does not close a connection it was given). */
  private readonly workerConnections: Redis[] = [];
  private readonly subscriber: Redis;
  private readonly connection: Redis;

  constructor(
    private readonly lanes: JobLanes,
    private readonly deps: JobRunDeps,
    private readonly options: QueueRunnerOptions,
  ) {
    this.connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    this.connection.on('error', (e) => options.onError?.(e));
    for (const queue of QUEUE_NAMES) {
      this.queues.set(queue, new Queue<QueuedJobData>(bullQueueName(queue), { connection: this.connection, prefix: options.prefix }));
    }
    this.feeder = new Feeder(lanes, {
      room: (queue) => this.room(queue),
      take: (jobs) => this.hand(jobs),
      sweepIntervalMs: options.sweepIntervalMs,
      lostAfterSeconds: LOST_AFTER_SECONDS,
      ...(options.pausedTenants ? { pausedTenants: options.pausedTenants } : {}),
      onError: options.onError,
    });
    this.subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    this.subscriber.on('error', (e) => options.onError?.(e));
    this.subscriber.on('message', () => this.feeder.wake());
    // Back after an outage: what was enqueued meanwhile woke nobody.
    this.subscriber.on('ready', () => this.feeder.wake());
  }

  start(): void {
    for (const queue of QUEUE_NAMES) {
      const connection = this.connection.duplicate();
      this.workerConnections.push(connection);
      const worker = new Worker<QueuedJobData>(bullQueueName(queue), (job) => this.process(job), {
        connection,
        prefix: this.options.prefix,
        concurrency: this.options.concurrency,
        lockDuration: this.options.lockMs,
        stalledInterval: this.options.lockMs,
        maxStalledCount: 2,
      });
      worker.on('error', (e) => this.options.onError?.(e));
      this.workers.push(worker);
    }
    this.feeder.start();
    this.subscriber.subscribe(jobsWakeChannel(this.options.prefix)).catch(() => {}); // retried on reconnect; the sweep runs meanwhile
  }

  wake(): void {
    this.feeder.wake();
  }

  /** Jobs waiting in each queue's window (Redis), for the metrics. */
  async waiting(): Promise<Record<JobQueueName, number>> {
    const out = {} as Record<JobQueueName, number>;
    for (const [name, queue] of this.queues) out[name] = await queue.getWaitingCount();
    return out;
  }

  /**
   * Stops taking jobs and waits for those running; `force` does not wait (their BullMQ locks run
   * out and other workers run them again).
   */
  async close(force = false): Promise<void> {
    await this.feeder.close();
    this.subscriber.disconnect();
    await Promise.all(this.workers.map((w) => w.close(force)));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    for (const c of this.workerConnections) c.disconnect();
    this.connection.disconnect();
  }

  private async process(job: Job<QueuedJobData>): Promise<void> {
    try {
      await runJob(this.lanes.laneOf(job.data.cluster).db, job.data.id, this.deps);
    } finally {
      this.feeder.wake();
    }
  }

  private async room(queue: JobQueueName): Promise<number> {
    const q = this.queues.get(queue);
    if (!q) return 0;
    const waiting = await q.getWaitingCount();
    return this.options.window - waiting;
  }

  private async hand(jobs: readonly FedJob[]): Promise<void> {
    const byQueue = new Map<JobQueueName, FedJob[]>();
    for (const job of jobs) byQueue.set(job.queue, [...(byQueue.get(job.queue) ?? []), job]);
    for (const [queue, list] of byQueue) {
      await this.queues.get(queue)?.addBulk(
        list.map((j) => ({
          name: j.tenant,
          data: { cluster: j.cluster, id: j.id, tenant: j.tenant },
          opts: { jobId: j.id, lifo: j.atFront, removeOnComplete: { age: 3600, count: 10_000 }, removeOnFail: { age: 24 * 3600 } },
        })),
      );
    }
  }
}
