/**
 * A deduplicating work queue of keys, as client-go's: a key is queued at most once however often it
 * is added; a key being processed is not handed to a second worker, and if it is added meanwhile it
 * is queued again when done. Failures back off per key (doubling from base to max); success forgets.
 */
export interface WorkQueueOptions {
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, NodeJS.Timeout>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;

  constructor(private readonly options: WorkQueueOptions) {}

  /** Keys waiting (not counting those being processed or delayed). */
  get depth(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
  }

  /** Adds `key` after `ms` (a sooner add wins; the later one then finds it queued or done). */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    clearTimeout(this.delayed.get(key));
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.delayed.set(key, timer);
  }

  /** Re-adds `key` after its next backoff step; returns the delay. */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const ms = Math.min(this.options.backoffBaseMs * 2 ** n, this.options.backoffMaxMs);
    this.addAfter(key, ms);
    return ms;
  }

  /** Clears `key`'s backoff (it succeeded, or its spec changed). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key to process, or undefined once shut down. Call done(key) after. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  /** Wakes every waiting worker with undefined; no more keys are taken. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const timer of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
