import type { DocContext } from '@quire/documents';
import { nowDatetime } from '@quire/meta';
import { attemptDelivery, type Attempted, type DeliveryDeps } from './delivery';
import { claimDue, releaseClaims, type ClaimedEvent } from './events';
import { recordBatch, requestLogRow, REQUEST_LOG, type TenantBookkeeping } from './request-log';
import { WebhookStates } from './webhook-state';

/**
 * Delivery of the outbox in batches, the same for the Redis worker and the in-process runner:
 *
 * - claim: one statement takes due events (oldest first, SKIP LOCKED, a lease each) for the free
 *   delivery slots and as many again to wait beside them, so that a freed slot starts its next
 *   request at once; when woken — a commit's wake-up, a retry falling due, the periodic sweep — and
 *   again while claims come back full. Claims are at least `claimGapMs` apart, so wake-ups at a high
 *   rate share one claim. An event that waited past half its lease margin is given back unattempted.
 * - deliver: up to `concurrency` requests in flight (keep-alive connections, the address guard),
 *   the webhook's state and secret from a short-lived cache.
 * - record: finished attempts wait at most `flushDelayMs` (or until `flushSize` are waiting) and are
 *   written together in one statement: each tenant's Webhook Request Log rows, the events' new
 *   states, the webhooks a 410 disabled.
 *
 * Postgres stays the source of truth: an event is leased while this process works on it, and its
 * new state is written only under that lease. A process that dies mid-batch leaves its events
 * leased; when the leases run out any process's sweep takes them again (delivery is at least once:
 * an attempt whose outcome was not yet written is made again, and only written attempts have a log
 * row).
 */

export interface DispatcherOptions {
  /** Delivery requests in flight at most. */
  concurrency: number;
  /** How often the outbox is looked at without a wake-up (expired leases, other processes' retries, lost wake-ups). */
  sweepIntervalMs: number;
  /** Least time between two claims (default 10 ms). */
  claimGapMs?: number;
  /** Longest a finished attempt waits for its bookkeeping write (default 20 ms)… */
  flushDelayMs?: number;
  /** …or until this many are waiting (default 200). */
  flushSize?: number;
  /** How long a webhook's enabled flag and secret are reused (default 1 s). */
  stateTtlMs?: number;
  onError?: (e: unknown) => void;
}

/** Retries due within this are woken by a timer of the process that scheduled them; later ones by any process's sweep. */
const LOCAL_RETRY_MS = 60_000;
/** Retries falling due within one slot share a wake-up timer. */
const RETRY_SLOT_MS = 100;
/** A batch whose write failed is written again (per tenant) after this. */
const RECORD_RETRY_MS = 100;
/** After a failed claim, the next waits this long (a database outage must not spin). */
const CLAIM_ERROR_PAUSE_MS = 1000;

export class Dispatcher {
  private readonly states: WebhookStates;
  private readonly claimGapMs: number;
  private readonly flushDelayMs: number;
  private readonly flushSize: number;
  /** Attempts in progress. */
  private sending = 0;
  /** Claimed events waiting for a free slot, with when they were claimed. */
  private readonly ready: Array<{ e: ClaimedEvent; at: number }> = [];
  /** Claimed events whose outcome is not written yet (ready, sending or waiting for the write). */
  private unrecorded = 0;
  /** Something may be due: a wake-up came, or the last claim was full. */
  private dirty = false;
  private claiming = false;
  /** performance.now() before which no claim starts. */
  private notBefore = 0;
  private claimTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Retry wake-ups by the 100 ms slot they fire in. */
  private readonly retryTimers = new Map<number, NodeJS.Timeout>();
  private buffer: Attempted[] = [];
  private bufferedSince = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing = false;
  private closed = false;
  private idle: (() => void) | undefined;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: DispatcherOptions,
  ) {
    this.states = new WebhookStates(options.stateTtlMs ?? 1000);
    this.claimGapMs = options.claimGapMs ?? 10;
    this.flushDelayMs = options.flushDelayMs ?? 20;
    this.flushSize = options.flushSize ?? 200;
  }

  /** Sweeps now and every `sweepIntervalMs`. */
  start(): void {
    if (this.closed || this.sweepTimer) return;
    this.sweepTimer = setInterval(() => this.wake(), this.options.sweepIntervalMs);
    this.sweepTimer.unref();
    this.wake();
  }

  /** Events were committed or fell due: claim what is due as soon as slots and the claim gap allow. */
  wake(): void {
    if (this.closed) return;
    this.dirty = true;
    this.pump();
  }

  /** Events claimed by this process whose outcome is not written yet. */
  get inFlight(): number {
    return this.unrecorded;
  }

  private pump(): void {
    this.startReady();
    if (this.closed || this.claiming || !this.dirty) return;
    // Claimed ahead: up to `concurrency` events wait beside the requests in flight, so a freed slot
    // starts the next request at once instead of after a claim's round trip.
    const { concurrency } = this.options;
    const room = Math.min(2 * concurrency - this.sending - this.ready.length, 2 * concurrency + this.flushSize - this.unrecorded);
    if (room <= 0) return; // a finished attempt pumps again
    const wait = this.notBefore - performance.now();
    if (wait > 0) {
      if (!this.claimTimer) {
        this.claimTimer = setTimeout(() => {
          this.claimTimer = undefined;
          this.pump();
        }, wait);
        this.claimTimer.unref();
      }
      return;
    }
    this.claiming = true;
    this.dirty = false;
    claimDue(this.deps.db, room, this.deps.leaseMarginMs)
      .then(
        (events) => {
          if (events.length >= room) this.dirty = true; // there may be more
          const at = performance.now();
          for (const e of events) this.ready.push({ e, at });
          this.unrecorded += events.length;
          this.notBefore = at + this.claimGapMs;
        },
        (e: unknown) => {
          this.options.onError?.(e);
          this.dirty = true;
          this.notBefore = performance.now() + CLAIM_ERROR_PAUSE_MS;
        },
      )
      .finally(() => {
        this.claiming = false;
        this.pump();
        this.checkIdle();
      });
  }

  /** Starts requests for claimed events while slots are free. */
  private startReady(): void {
    const stale: ClaimedEvent[] = [];
    for (let next = this.ready[0]; next && this.sending < this.options.concurrency; next = this.ready[0]) {
      this.ready.shift();
      // Waited so long (slow receivers held every slot) that its lease could run out mid-request:
      // given back, for any process to take.
      if (performance.now() - next.at > this.deps.leaseMarginMs / 2) stale.push(next.e);
      else this.begin(next.e);
    }
    if (stale.length > 0) void this.release(stale);
  }

  /** Gives claimed events back unattempted (their leases end now). */
  private release(events: ClaimedEvent[]): Promise<void> {
    return releaseClaims(this.deps.db, events)
      .catch((e: unknown) => this.options.onError?.(e)) // their leases run out on their own
      .finally(() => {
        this.unrecorded -= events.length;
        this.checkIdle();
      });
  }

  private begin(e: ClaimedEvent): void {
    this.sending++;
    attemptDelivery(this.deps, this.states, e, nowDatetime).then(
      (attempted) => {
        this.sending--;
        this.buffer.push(attempted);
        if (this.buffer.length === 1) this.bufferedSince = performance.now();
        this.scheduleFlush();
        this.pump();
      },
      (err: unknown) => {
        // Its state could not be read: the event keeps its lease and is taken again when it runs out.
        this.sending--;
        this.unrecorded--;
        this.options.onError?.(err);
        this.pump();
        this.checkIdle();
      },
    );
  }

  private scheduleFlush(): void {
    if (this.flushing || this.buffer.length === 0) return;
    const wait = this.closed || this.buffer.length >= this.flushSize ? 0 : this.bufferedSince + this.flushDelayMs - performance.now();
    if (wait <= 0) {
      this.flush();
      return;
    }
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        this.scheduleFlush();
      }, wait);
      this.flushTimer.unref();
    }
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.buffer.splice(0, this.flushSize);
    if (this.buffer.length > 0) this.bufferedSince = performance.now();
    this.flushing = true;
    void this.write(batch).finally(() => {
      this.flushing = false;
      this.unrecorded -= batch.length;
      this.scheduleFlush();
      this.pump();
      this.checkIdle();
    });
  }

  /**
   * Writes a batch; if that fails, once more a moment later with each tenant's share on its own (a
   * passing failure is survived, and one tenant's failure does not hold back the others).
   */
  private async write(batch: Attempted[]): Promise<void> {
    if (await this.tryRecord(batch)) return;
    const byTenant = new Map<string, Attempted[]>();
    for (const a of batch) {
      const share = byTenant.get(a.event.tenant);
      if (share) share.push(a);
      else byTenant.set(a.event.tenant, [a]);
    }
    await new Promise((resolve) => setTimeout(resolve, RECORD_RETRY_MS));
    // Not written then: those events keep their leases and are attempted again when they run out.
    for (const share of byTenant.values()) await this.tryRecord(share);
  }

  private async tryRecord(batch: readonly Attempted[]): Promise<boolean> {
    try {
      await this.record(batch);
    } catch (e) {
      this.options.onError?.(e);
      return false;
    }
    this.recorded(batch);
    return true;
  }

  private async record(batch: readonly Attempted[]): Promise<void> {
    const tenants = new Map<string, TenantBookkeeping & { ctx: DocContext }>();
    for (const a of batch) {
      if (!a.ctx) continue;
      let t = tenants.get(a.event.tenant);
      if (!t) {
        t = { ctx: a.ctx, log: a.ctx.meta.require(REQUEST_LOG), rows: [], webhook: a.ctx.meta.require('Webhook'), disable: [] };
        tenants.set(a.event.tenant, t);
      }
      if (a.log) t.rows.push(requestLogRow(a.ctx, a.log, a.at));
      if (a.outcome === 'disabled' && !t.disable.includes(a.event.webhook)) t.disable.push(a.event.webhook);
    }
    const shares = [...tenants.values()];
    const outcomes = batch.map((a) => ({ id: a.event.id, lease: a.event.lease, result: a.result }));
    const disabling = shares.filter((t) => t.disable.length > 0);
    if (disabling.length === 0) {
      await recordBatch(this.deps.db, shares, outcomes);
      return;
    }
    await this.deps.db.transaction(async (tx) => {
      await recordBatch(tx, shares, outcomes);
      // Webhook definitions are cached with the tenant's metadata (outbox.ts, webhook-state.ts):
      // a webhook retired here is dropped from every process's caches, as when it is saved.
      for (const t of disabling) await t.ctx.changes.metaChanged(tx, t.ctx.tenant);
    });
  }

  private recorded(batch: readonly Attempted[]): void {
    for (const a of batch) {
      this.deps.observer?.attempted({ outcome: a.outcome, durationMs: a.durationMs, attempt: a.attempt, lagMs: a.lagMs });
      const delay = a.result.status === 'pending' ? a.result.nextAttemptInMs : undefined;
      if (delay !== undefined && delay < LOCAL_RETRY_MS) this.wakeAt(Date.now() + delay);
    }
  }

  /**
   * A wake-up when a retry falls due: one timer per 100 ms, however many retries fall due in it
   * (a failing receiver's backlog must not cost a timer per event).
   */
  private wakeAt(due: number): void {
    if (this.closed) return;
    const slot = Math.ceil(due / RETRY_SLOT_MS) * RETRY_SLOT_MS;
    if (this.retryTimers.has(slot)) return;
    const timer = setTimeout(
      () => {
        this.retryTimers.delete(slot);
        this.wake();
      },
      Math.max(0, slot - Date.now()),
    );
    timer.unref();
    this.retryTimers.set(slot, timer);
  }

  private checkIdle(): void {
    if (this.idle && this.unrecorded === 0 && !this.claiming) this.idle();
  }

  /**
   * Stops claiming; unless `force`, waits until every claimed event's attempt is made and written.
   * With `force` it returns as soon as the events claimed but not yet attempted are given back: what
   * is in flight keeps its lease and is taken again when it runs out.
   */
  async close(force = false): Promise<void> {
    this.closed = true;
    for (const timer of [this.sweepTimer, this.claimTimer, ...this.retryTimers.values()]) clearTimeout(timer);
    this.retryTimers.clear();
    this.sweepTimer = undefined;
    this.claimTimer = undefined;
    if (force) {
      await this.release(this.ready.splice(0).map((r) => r.e));
      return;
    }
    this.scheduleFlush();
    if (this.unrecorded === 0 && !this.claiming) return;
    await new Promise<void>((resolve) => (this.idle = resolve));
  }
}
