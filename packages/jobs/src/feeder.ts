import type { JobQueueName } from '@quire/documents';
import { deleteEnded, pickFairly, releaseLost, type PickedJob } from './fair-pick';
import { rotated, type JobLane, type JobLanes } from './job-lanes';
import { QUEUE_NAMES } from './queues';
import { tickSchedules } from './schedules';

/** A job picked on a cluster, to be run or handed to a queue. */
export interface FedJob extends PickedJob {
  cluster: string;
  queue: JobQueueName;
}

/** Ended jobs past their keeping are deleted at most this often (by each worker process's sweep). */
const TIDY_EVERY_MS = 60_000;

export interface FeederOptions {
  /** How many more jobs of `queue` the runners can take now (free slots, or room in a queue's waiting list). */
  room(queue: JobQueueName): Promise<number>;
  /** Takes the picked jobs (runs them, or adds them to a queue). */
  take(jobs: readonly FedJob[]): Promise<void>;
  /** How often the feeder looks without being woken (backoffs falling due, lost jobs, other processes' enqueues). */
  sweepIntervalMs: number;
  /** A job handed out but not started for this long is taken to be lost and waits again. */
  lostAfterSeconds: number;
  /** Tenants whose jobs and scheduled events wait (suspended or read-only); none when not given. */
  pausedTenants?: () => readonly string[];
  onError?: (e: unknown, cluster?: string) => void;
}

/**
 * Moves waiting jobs from the clusters' tables to the runners, fairly (fair-pick.ts), as much as
 * they have room for: when woken (a commit's wake-up, a finished job), by its sweep, and again
 * while what it picked filled the room (more may wait). One feeding at a time per process; a
 * wake-up during one makes another follow it.
 */
export class Feeder {
  private feeding: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private turn = 0;
  private closed = false;
  private tidiedAt = -Infinity;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly lanes: JobLanes,
    private readonly options: FeederOptions,
  ) {}

  start(): void {
    const sweep = () => {
      this.sweeping = this.sweep().finally(() => {
        this.sweeping = undefined;
        if (!this.closed) this.timer = setTimeout(sweep, this.options.sweepIntervalMs);
      });
    };
    sweep();
  }

  /** Something was enqueued or finished: feed now (or right after the feeding under way). */
  wake(): void {
    if (this.closed) return;
    if (this.feeding) {
      this.again = true;
      return;
    }
    this.feeding = this.feedWhileWoken().finally(() => (this.feeding = undefined));
  }

  /** Stops; resolves once no sweep or feeding of its is still using the database (it may close next). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.sweeping;
    await this.feeding;
  }

  private async sweep(): Promise<void> {
    if (this.closed) return;
    const tidy = performance.now() - this.tidiedAt >= TIDY_EVERY_MS;
    if (tidy) this.tidiedAt = performance.now();
    for (const lane of await this.safeLanes()) {
      await releaseLost(lane.db, this.options.lostAfterSeconds).catch((e: unknown) => this.options.onError?.(e, lane.cluster));
      await tickSchedules(lane.db, new Date(), this.paused()).catch((e: unknown) => this.options.onError?.(e, lane.cluster));
      if (tidy) await deleteEnded(lane.db).catch((e: unknown) => this.options.onError?.(e, lane.cluster));
    }
    this.wake();
  }

  private async feedWhileWoken(): Promise<void> {
    do {
      this.again = false;
      if (await this.feedOnce()) this.again = true;
    } while (this.again && !this.closed);
  }

  /** One round over every queue; true when some queue's room was filled (more may wait). */
  private async feedOnce(): Promise<boolean> {
    const lanes = rotated(await this.safeLanes(), this.turn++);
    let filled = false;
    for (const queue of QUEUE_NAMES) {
      let room = await this.options.room(queue).catch((e: unknown) => (this.options.onError?.(e), 0));
      if (room <= 0) continue;
      for (const lane of lanes) {
        if (room <= 0) break;
        const picked = await this.pick(lane, queue, room);
        if (picked.length === 0) continue;
        room -= picked.length;
        await this.options.take(picked).catch((e: unknown) => this.options.onError?.(e, lane.cluster));
      }
      if (room <= 0) filled = true;
    }
    return filled;
  }

  private async pick(lane: JobLane, queue: JobQueueName, room: number): Promise<FedJob[]> {
    try {
      const picked = await pickFairly(lane.db, queue, room, this.paused());
      return picked.map((j) => ({ ...j, cluster: lane.cluster, queue }));
    } catch (e) {
      this.options.onError?.(e, lane.cluster);
      return [];
    }
  }

  private paused(): readonly string[] {
    return this.options.pausedTenants?.() ?? [];
  }

  private async safeLanes(): Promise<readonly JobLane[]> {
    try {
      return await this.lanes.lanes();
    } catch (e) {
      this.options.onError?.(e);
      return [];
    }
  }
}
