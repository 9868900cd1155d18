import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ClusterApi } from './cluster';
import { describe, isConflict } from './errors';

export interface LeaderElectionOptions {
  leaseName: string;
  /** This process, distinct from every other candidate (see processIdentity). */
  identity: string;
  leaseDurationSeconds: number;
  /** A leader that has not renewed for this long steps down. */
  renewDeadlineMs: number;
  /** How often the leader renews and the others try. */
  retryPeriodMs: number;
  logger: Logger;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

/**
 * client-go's default holder identity, `<hostname>_<random>`: new for every process, so two
 * operators on one host (or a pod restarted under the same name) are distinct holders, and a
 * restarted process waits for the Lease its predecessor held to expire or be released like any
 * other candidate instead of renewing it as its own.
 */
export function processIdentity(host: string = hostname()): string {
  return `${host}_${randomUUID()}`;
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's: the holder renews every
 * retry period; the others take the Lease over only when its record has not changed for a whole
 * lease duration by their own clock (clock skew between nodes does not matter); every write is a
 * compare-and-swap on the resourceVersion, so two replicas never both win. On stop the leader
 * releases the Lease so a standby takes over at once.
 */
export class LeaderElector {
  private leading = false;
  /** The last attempt found the Lease held, unexpired, by another replica. */
  private otherHolds = false;
  private lastRenewAt = 0;
  /** The Lease record as last seen, and when (local monotonic time) it last changed. */
  private observed: { record: string; at: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private cycle: Promise<void> = Promise.resolve();

  constructor(
    private readonly api: ClusterApi,
    private readonly options: LeaderElectionOptions,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops trying; a leader steps down and releases the Lease. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.cycle;
    if (!this.leading) return;
    this.stepDown();
    try {
      await this.release();
    } catch (err) {
      this.options.logger.warn({ err: describe(err) }, 'could not release the leader Lease (it expires by itself)');
    }
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.cycle = this.tick().finally(() => this.schedule(this.options.retryPeriodMs));
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    let held: boolean;
    try {
      held = await this.tryAcquireOrRenew();
    } catch (err) {
      this.options.logger.warn({ err: describe(err), lease: this.options.leaseName }, 'leader election: could not read or write the Lease');
      held = false;
    }
    if (!this.running) return;
    const now = performance.now();
    if (held) {
      this.lastRenewAt = now;
      if (!this.leading) {
        this.leading = true;
        this.options.logger.info({ lease: this.options.leaseName, identity: this.options.identity }, 'became the leader');
        this.options.onStartedLeading();
      }
    } else if (this.leading && (this.otherHolds || now - this.lastRenewAt > this.options.renewDeadlineMs)) {
      this.stepDown();
    }
  }

  private stepDown(): void {
    this.leading = false;
    this.options.logger.warn({ lease: this.options.leaseName, identity: this.options.identity }, 'stopped leading');
    this.options.onStoppedLeading();
  }

  /** One attempt: true when this replica holds the Lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { leaseName, identity, leaseDurationSeconds } = this.options;
    const now = new V1MicroTime();
    const lease = await this.api.readLease(leaseName);
    this.otherHolds = false;
    if (!lease) {
      try {
        await this.api.createLease({
          metadata: { name: leaseName },
          spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        });
        return true;
      } catch (err) {
        if (isConflict(err)) return false; // another replica created it first
        throw err;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    if (holder !== identity && holder !== '' && !this.expired(lease)) {
      this.otherHolds = true;
      return false;
    }
    const next: V1Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds,
        renewTime: now,
        acquireTime: holder === identity ? spec.acquireTime : now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
      },
    };
    try {
      await this.api.replaceLease(next);
      return true;
    } catch (err) {
      if (isConflict(err)) return false; // written by another replica since the read
      throw err;
    }
  }

  /** Expired when its record has not changed for a lease duration, timed by this process's clock. */
  private expired(lease: V1Lease): boolean {
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, lease.metadata?.resourceVersion]);
    const now = performance.now();
    if (this.observed?.record !== record) this.observed = { record, at: now };
    const duration = (spec.leaseDurationSeconds ?? this.options.leaseDurationSeconds) * 1000;
    return now - this.observed.at > duration;
  }

  /** Hands the Lease back (client-go's ReleaseOnCancel): no holder, so a standby takes it on its next try. */
  private async release(): Promise<void> {
    const lease = await this.api.readLease(this.options.leaseName);
    if (!lease || lease.spec?.holderIdentity !== this.options.identity) return;
    await this.api.replaceLease({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime() } });
  }
}
