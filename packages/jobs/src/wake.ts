import { Redis } from 'ioredis';

/** The channel enqueues wake the deployment's job feeders on: `<prefix>:quire-jobs:wake`. */
export function jobsWakeChannel(prefix: string): string {
  return `${prefix}:quire-jobs:wake`;
}

/** How long `close` waits for a wake-up being published (Redis may be unreachable). */
const CLOSE_WAIT_MS = 2000;

/**
 * The enqueuing side with Redis (API, CLI): after a job commits, a wake-up on the deployment's
 * channel. Best effort and never blocking: wake-ups during one being published share the next;
 * a lost one only delays the job until a feeder's sweep.
 */
export class JobsWakeProducer {
  private readonly redis: Redis;
  private publishing: Promise<void> | undefined;
  private pending = false;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
  ) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    this.redis.on('error', () => {}); // a Redis outage must not crash the API
  }

  notify(): void {
    this.pending = true;
    this.publishing ??= this.publish();
  }

  private async publish(): Promise<void> {
    while (this.pending) {
      this.pending = false;
      await this.redis.publish(jobsWakeChannel(this.prefix), '').catch(() => {});
    }
    this.publishing = undefined;
  }

  async close(): Promise<void> {
    if (this.publishing) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.publishing, new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    this.redis.disconnect();
  }
}
