import type { ControlMessage } from './transport';

/**
 * Which tenants have sockets anywhere, so that a write whose tenant has none sends no event at
 * all (no Redis PUBLISH or NOTIFY per write for the many tenants nobody watches). Each process
 * announces the tenants it has sockets of when the first one connects and again every
 * `intervalMs`; an announcement heard counts for `ttlMs`. A process starting asks the others to
 * announce at once.
 */
const ANNOUNCE_PART = 100;

export class Presence {
  /** Tenant -> sockets connected to this process. */
  private readonly local = new Map<string, number>();
  /** Tenant -> when the last announcement heard from any process stops counting (ms since the epoch). */
  private readonly remote = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly announce: (message: ControlMessage) => Promise<void>,
    private readonly ttlMs = 30_000,
    intervalMs = 10_000,
  ) {
    this.timer = setInterval(() => void this.announceAll(), intervalMs);
    this.timer.unref();
  }

  /** Asks every process to announce (at start, before any write is judged). */
  start(): Promise<void> {
    return this.announce({ kind: 'query' }).catch(() => undefined);
  }

  /** Whether sockets of `tenant` may be listening anywhere. */
  wanted(tenant: string): boolean {
    if ((this.local.get(tenant) ?? 0) > 0) return true;
    const until = this.remote.get(tenant);
    return until !== undefined && until > Date.now();
  }

  /** A socket of `tenant` connected here; resolves once the others can know (the first one's announcement was sent). */
  async connected(tenant: string): Promise<void> {
    const n = (this.local.get(tenant) ?? 0) + 1;
    this.local.set(tenant, n);
    if (n === 1) await this.announce({ kind: 'interest', tenants: [tenant] }).catch(() => undefined);
  }

  disconnected(tenant: string): void {
    const n = (this.local.get(tenant) ?? 1) - 1;
    if (n <= 0) this.local.delete(tenant);
    else this.local.set(tenant, n);
  }

  heard(message: ControlMessage): void {
    if (message.kind === 'query') {
      void this.announceAll();
      return;
    }
    const until = Date.now() + this.ttlMs;
    for (const t of message.tenants) this.remote.set(t, until);
    if (this.remote.size > 10_000) this.prune();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async announceAll(): Promise<void> {
    const tenants = [...this.local.keys()];
    // In parts that fit one NOTIFY (8000 bytes) whatever the names.
    for (let i = 0; i < tenants.length; i += ANNOUNCE_PART) {
      await this.announce({ kind: 'interest', tenants: tenants.slice(i, i + ANNOUNCE_PART) }).catch(() => undefined);
    }
  }

  private prune(): void {
    const now = Date.now();
    for (const [t, until] of this.remote) if (until <= now) this.remote.delete(t);
  }
}
