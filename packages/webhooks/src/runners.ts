import { Queue, Worker, type Job } from 'bullmq';
import { deliverEvent, type DeliveryDeps, type DeliveryReport } from './delivery';
import { dueEvents, msUntilNextDue } from './events';

/**
 * What wakes delivery. Postgres (the outbox) is the source of truth; these only carry wake-ups:
 * - with Redis, the API enqueues each committed event and any number of webhooks processes take
 *   jobs from BullMQ; a retry is a delayed job; a sweep re-enqueues what is due but missing (the
 *   API died after commit, Redis was flushed, a worker died holding a job).
 * - without Redis, one process sweeps and delivers in-process with the same delivery code.
 */

export const QUEUE_NAME = 'quire-webhooks';

export interface DeliveryJob {
  id: string;
}

/**
 * One BullMQ job per attempt, named by the attempts made before it: the API's job for a new event
 * and the sweep's for the same first attempt are one job (`<id>_0`), so a backlog never holds
 * jobs that can only lose the claim to their twin.
 */
function jobId(eventId: string, attemptsMade: number): string {
  return `${eventId}_${attemptsMade}`;
}

/**
 * Where a deployment's queue lives in Redis: BullMQ's key prefix (its default is `bull`), one per
 * deployment, so the webhooks processes of two databases sharing a Redis never take each other's jobs.
 */
export interface QueueLocation {
  redisUrl: string;
  prefix: string;
}

function queueOptions(at: QueueLocation) {
  return { connection: { url: at.redisUrl, maxRetriesPerRequest: null }, prefix: at.prefix } as const;
}

/** The writing side with Redis (API, CLI): enqueue each committed event at once. */
export class QueueProducer {
  private readonly queue: Queue<DeliveryJob>;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(at: QueueLocation) {
    this.queue = new Queue<DeliveryJob>(QUEUE_NAME, queueOptions(at));
    this.queue.on('error', () => {}); // a Redis outage must not crash the API; the sweep catches up
  }

  /** Best effort: if Redis is down the events wait in Postgres for a sweep. */
  notify(ids: readonly string[]): void {
    const added = this.queue
      .addBulk(ids.map((id) => ({ name: 'deliver', data: { id }, opts: { jobId: jobId(id, 0), removeOnComplete: true, removeOnFail: true } })))
      .catch(() => {});
    this.pending.add(added);
    void added.finally(() => this.pending.delete(added));
  }

  /** Waits for the jobs being added (a CLI command exits right after its write), then disconnects. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    await this.queue.close();
  }
}

export interface WorkerOptions extends QueueLocation {
  concurrency: number;
  /** How often the outbox is swept for due events that no queue holds. */
  sweepIntervalMs: number;
  /** BullMQ's lock on an active job and its stalled-job check (a dead worker's jobs return after this). */
  lockDurationMs: number;
  onError?: (e: unknown) => void;
}

/** A `quire serve webhooks` process: BullMQ consumer plus outbox sweeper. */
export class QueueWorker {
  private readonly queue: Queue<DeliveryJob>;
  private readonly worker: Worker<DeliveryJob>;
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: WorkerOptions,
  ) {
    this.queue = new Queue<DeliveryJob>(QUEUE_NAME, queueOptions(options));
    this.queue.on('error', (e) => options.onError?.(e));
    this.worker = new Worker<DeliveryJob>(QUEUE_NAME, (job: Job<DeliveryJob>) => this.process(job.data.id), {
      ...queueOptions(options),
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.lockDurationMs,
      maxStalledCount: 10,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    this.worker.on('error', (e) => options.onError?.(e));
  }

  start(): void {
    const tick = () => {
      if (this.closed) return;
      this.sweep()
        .catch((e: unknown) => this.options.onError?.(e))
        .finally(() => {
          if (!this.closed) this.sweepTimer = setTimeout(tick, this.options.sweepIntervalMs);
        });
    };
    tick();
  }

  private async process(id: string): Promise<DeliveryReport> {
    const report = await deliverEvent(this.deps, id);
    if (report.outcome === 'retrying') {
      await this.queue
        .add('deliver', { id }, { jobId: jobId(id, report.attempts ?? 0), delay: report.retryInMs ?? 0, removeOnComplete: true, removeOnFail: true })
        .catch(() => {}); // the sweep finds it when due
    }
    return report;
  }

  /** Re-enqueues every due event that no live job or lease covers. */
  async sweep(): Promise<number> {
    const due = await dueEvents(this.deps.db, 500);
    if (due.length === 0) return 0;
    await this.queue.addBulk(
      due.map((d) => ({ name: 'deliver', data: { id: d.id }, opts: { jobId: jobId(d.id, d.attempts), removeOnComplete: true, removeOnFail: true } })),
    );
    return due.length;
  }

  /** Jobs waiting, delayed or active (for the queue-depth metric). */
  async queueDepth(): Promise<number> {
    const counts = await this.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  /**
   * Stops taking jobs and waits for the active ones; `force` stops without waiting (their events
   * keep their outbox lease, and any worker's sweep retakes them when it runs out).
   */
  async close(force = false): Promise<void> {
    this.closed = true;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    await this.worker.close(force);
    await this.queue.close();
  }
}

export interface RunnerOptions {
  concurrency: number;
  sweepIntervalMs: number;
  onError?: (e: unknown) => void;
}

/** Delivery without Redis (`npm start`): the API process sweeps the outbox and delivers itself. */
export class InProcessRunner {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: RunnerOptions,
  ) {}

  start(): void {
    this.wake();
  }

  /** Something was committed (or is due): sweep now. */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = true;
    this.round()
      .catch((e: unknown) => this.options.onError?.(e))
      .finally(() => {
        this.running = false;
        if (this.closed) return;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.schedule();
      });
  }

  private schedule(): void {
    void msUntilNextDue(this.deps.db)
      .catch(() => undefined)
      .then((ms) => {
        if (this.closed || this.running) return;
        const wait = Math.min(this.options.sweepIntervalMs, ms ?? this.options.sweepIntervalMs);
        this.timer = setTimeout(() => this.wake(), Math.max(wait, 5));
        this.timer.unref();
      });
  }

  private async round(): Promise<void> {
    for (;;) {
      const due = await dueEvents(this.deps.db, this.options.concurrency * 4);
      if (due.length === 0) return;
      let index = 0;
      const lanes = Array.from({ length: Math.min(this.options.concurrency, due.length) }, async () => {
        for (let next = due[index++]; next !== undefined; next = due[index++]) {
          const p = deliverEvent(this.deps, next.id);
          this.inFlight.add(p);
          await p.catch((e: unknown) => this.options.onError?.(e)).finally(() => this.inFlight.delete(p));
        }
      });
      await Promise.all(lanes);
      if (due.length < this.options.concurrency * 4) return;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }
}
