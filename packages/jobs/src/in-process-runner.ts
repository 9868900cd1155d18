import type { JobQueueName } from '@quire/documents';
import { Feeder, type FedJob } from './feeder';
import type { JobLanes } from './job-lanes';
import { runJob, type JobRunDeps } from './run-job';

export interface InProcessRunnerOptions {
  /** Jobs run at once in this process, per queue. */
  concurrency: number;
  sweepIntervalMs: number;
  /** Tenants whose jobs and scheduled events wait (suspended or read-only). */
  pausedTenants?: () => readonly string[];
  onError?: (e: unknown, cluster?: string) => void;
}

/** A job handed out and not started for this long (its process died) waits again. */
const LOST_AFTER_SECONDS = 60;

/**
 * Jobs without Redis (`npm start` on the embedded database, or Postgres without REDIS_URL): this
 * process picks jobs fairly from the clusters' tables and runs them itself, woken by its own
 * enqueues and its sweep. The same picking and running as the BullMQ workers, without the queue.
 */
export class InProcessJobRunner {
  private readonly feeder: Feeder;
  private readonly running = new Map<JobQueueName, number>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly lanes: JobLanes,
    private readonly deps: JobRunDeps,
    private readonly options: InProcessRunnerOptions,
  ) {
    this.feeder = new Feeder(lanes, {
      room: (queue) => Promise.resolve(options.concurrency - (this.running.get(queue) ?? 0)),
      take: (jobs) => {
        this.runAll(jobs);
        return Promise.resolve();
      },
      sweepIntervalMs: options.sweepIntervalMs,
      lostAfterSeconds: LOST_AFTER_SECONDS,
      ...(options.pausedTenants ? { pausedTenants: options.pausedTenants } : {}),
      onError: options.onError,
    });
  }

  start(): void {
    this.feeder.start();
  }

  wake(): void {
    this.feeder.wake();
  }

  /** Jobs running now. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Takes no more jobs and waits for those running (a job cut short by the process's exit is taken again once its lease ends). */
  async close(): Promise<void> {
    await this.feeder.close();
    await Promise.all(this.inFlight);
  }

  private runAll(jobs: readonly FedJob[]): void {
    for (const job of jobs) {
      this.running.set(job.queue, (this.running.get(job.queue) ?? 0) + 1);
      const run = runJob(this.lanes.laneOf(job.cluster).db, job.id, this.deps)
        .then(
          () => undefined,
          (e: unknown) => this.options.onError?.(e, job.cluster),
        )
        .finally(() => {
          this.running.set(job.queue, (this.running.get(job.queue) ?? 1) - 1);
          this.inFlight.delete(run);
          this.feeder.wake();
        });
      this.inFlight.add(run);
    }
  }
}
