import { Redis } from 'ioredis';
import type { DeliveryDeps } from './delivery';
import { Dispatcher, type DispatcherOptions } from './dispatcher';

/**
 * What wakes delivery. Postgres (each cluster's outbox) is the source of truth and the only place
 * events are claimed from (in batches, dispatcher.ts); Redis carries nothing but wake-ups:
 * - with Redis, every process that commits events (API, CLI) publishes a wake-up on the
 *   deployment's channel, naming the tenants whose events committed, and every `quire serve
 *   webhooks` process subscribed to it claims what is due on those tenants' clusters (on every
 *   cluster for a wake-up naming none, or a tenant it does not know). A lost wake-up (Redis down or
 *   restarted, a process that died right after commit) only delays delivery until the next sweep;
 *   retries are woken by a timer of the process that scheduled them, or by any process's sweep.
 * - without Redis, one process sweeps and is woken by its own commits, with the same delivery code.
 */

export const QUEUE_NAME = 'quire-webhooks';

/**
 * Where a deployment's wake-ups go in Redis: `<prefix>:quire-webhooks:wake`, one channel per
 * deployment, so the webhooks processes of two databases sharing a Redis never wake for each other.
 */
export interface QueueLocation {
  redisUrl: string;
  prefix: string;
}

export function wakeChannel(at: Pick<QueueLocation, 'prefix'>): string {
  return `${at.prefix}:${QUEUE_NAME}:wake`;
}

/** How long `close` waits for a wake-up being published (Redis may be unreachable). */
const CLOSE_WAIT_MS = 2000;
/** A wake-up names at most this many tenants; one for more names none (every cluster is looked at). */
const MAX_NAMED_TENANTS = 100;

/**
 * A wake-up's message: the tenants whose events committed, one per line (tenant names have no line
 * breaks); empty for "look everywhere" (and from producers that name none).
 */
function wakeMessage(tenants: ReadonlySet<string>, everywhere: boolean): string {
  return everywhere || tenants.size > MAX_NAMED_TENANTS ? '' : [...tenants].join('\n');
}

/** The tenants a wake-up names: none means every cluster. */
function wokenTenants(message: string): string[] {
  return message.split('\n').filter((name) => name !== '');
}

/** The writing side with Redis (API, CLI): wake the webhooks processes after each commit. */
export class QueueProducer {
  private readonly redis: Redis;
  private readonly channel: string;
  private publishing: Promise<void> | undefined;
  /** Tenants whose commits wait for the next wake-up. */
  private readonly tenants = new Set<string>();
  /** A commit of unknown tenant waits for the next wake-up: it names none. */
  private everywhere = false;

  constructor(at: QueueLocation) {
    this.channel = wakeChannel(at);
    // One retry per wake-up while Redis is away: nothing piles up, the sweep catches up.
    this.redis = new Redis(at.redisUrl, { maxRetriesPerRequest: 1 });
    this.redis.on('error', () => {}); // a Redis outage must not crash the API
  }

  /**
   * Best effort, never blocks: while a wake-up is being published, further commits share the next
   * one (a wake-up says "look in these tenants' outboxes", not which events). `tenant` names whose
   * events they are, so that only its cluster's outbox is looked at; without it every one is.
   */
  notify(ids: readonly string[], tenant?: string): void {
    if (ids.length === 0) return;
    if (tenant === undefined) this.everywhere = true;
    else this.tenants.add(tenant);
    this.publishing ??= this.publish();
  }

  private async publish(): Promise<void> {
    while (this.everywhere || this.tenants.size > 0) {
      const message = wakeMessage(this.tenants, this.everywhere);
      this.tenants.clear();
      this.everywhere = false;
      await this.redis.publish(this.channel, message).catch(() => {});
    }
    this.publishing = undefined;
  }

  /** Waits briefly for the wake-up being published (a CLI command exits right after its write), then disconnects. */
  async close(): Promise<void> {
    if (this.publishing) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.publishing, new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    this.redis.disconnect();
  }
}

export interface WorkerOptions extends QueueLocation, DispatcherOptions {}

/** A `quire serve webhooks` process with Redis: batched delivery, woken by the deployment's wake-ups and its sweep. */
export class QueueWorker {
  private readonly dispatcher: Dispatcher;
  private readonly subscriber: Redis;
  private readonly channel: string;

  constructor(deps: DeliveryDeps, options: WorkerOptions) {
    this.dispatcher = new Dispatcher(deps, options);
    this.subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    this.subscriber.on('error', (e) => options.onError?.(e));
    this.subscriber.on('message', (_channel: string, message: string) => this.dispatcher.wake(...wokenTenants(message)));
    // Connected again after an outage: what was committed meanwhile woke nobody.
    this.subscriber.on('ready', () => this.dispatcher.wake());
    this.channel = wakeChannel(options);
  }

  start(): void {
    this.dispatcher.start();
    this.subscriber.subscribe(this.channel).catch(() => {}); // retried on reconnect; the sweep runs meanwhile
  }

  /** Events this process has claimed and not yet recorded (for the queue-depth metric). */
  queueDepth(): Promise<number> {
    return Promise.resolve(this.dispatcher.inFlight);
  }

  /**
   * Stops listening and claiming, and waits for the deliveries in flight and their records; `force`
   * stops without waiting (their events keep their outbox lease, and any process's sweep retakes
   * them when it runs out).
   */
  async close(force = false): Promise<void> {
    this.subscriber.disconnect();
    await this.dispatcher.close(force);
  }
}

/** Delivery without Redis (`npm start`): the process sweeps the outbox and is woken by its own commits. */
export class InProcessRunner {
  private readonly dispatcher: Dispatcher;

  constructor(deps: DeliveryDeps, options: DispatcherOptions) {
    this.dispatcher = new Dispatcher(deps, options);
  }

  start(): void {
    this.dispatcher.start();
  }

  /** Something was committed (or is due): claim now, on the clusters of `tenants` (every one without). */
  wake(...tenants: string[]): void {
    this.dispatcher.wake(...tenants);
  }

  get inFlight(): number {
    return this.dispatcher.inFlight;
  }

  close(force = false): Promise<void> {
    return this.dispatcher.close(force);
  }
}
