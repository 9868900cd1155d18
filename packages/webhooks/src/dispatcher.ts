import type { Database } from '@quire/db';
import type { DocContext } from '@quire/documents';
import { nowDatetime } from '@quire/meta';
import { attemptDelivery, PLATFORM_OUTBOX, type Attempted, type DeliveryDeps, type Outbox } from './delivery';
import { claimDue, deleteEndedEvents, KEEP_ENDED_EVENTS_MS, releaseClaims, type ClaimedEvent, type TenantShares } from './events';
import { recordBatch, requestLogRow, REQUEST_LOG, type TenantBookkeeping } from './request-log';
import { WebhookStates } from './webhook-state';

/**
 * Delivery of the outboxes in batches, the same for the Redis worker and the in-process runner.
 * Each Postgres cluster has its own outbox (its tenants' events commit with their changes there),
 * drained as a lane of its own: claimed from, and recorded to, on that cluster only.
 *
 * - claim: one statement per cluster takes due events (oldest first, SKIP LOCKED, a lease each) for
 *   the free delivery slots and as many again to wait beside them, so that a freed slot starts its
 *   next request at once; when woken — a commit's wake-up (its tenant's cluster only, when known), a
 *   retry falling due, the periodic sweep (every cluster) — and again while claims come back full.
 *   A cluster's claims are at least `claimGapMs` apart, so wake-ups at a high rate share one claim.
 *   An event that waited past half its lease margin is given back unattempted.
 * - fairness between tenants: a claim takes each tenant's events in turn (events.ts, claimDue); in
 *   this process a tenant has at most `tenantMaxInFlight` requests in flight and as many claimed
 *   ahead, and a freed slot goes to the next claimed event whose tenant is under its share.
 * - fairness between clusters: the room for claims is shared among the clusters that have something
 *   due, the one with the fewest events in this process first; claimed events take free slots one
 *   cluster after the other; claims, writes and failures of one cluster never wait for another's (a
 *   cluster that cannot be reached is tried again after a pause that doubles up to 30 s).
 * - deliver: up to `concurrency` requests in flight (keep-alive connections, the address guard),
 *   the webhook's state and secret from a short-lived cache.
 * - record: finished attempts wait at most `flushDelayMs` (or until `flushSize` are waiting) and are
 *   written together in one statement per cluster: each tenant's Webhook Request Log rows, the
 *   events' new states, the webhooks a 410 disabled.
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
  /**
   * One tenant's requests in flight at once in this process (default: half of `concurrency`), and as
   * many claimed ahead: a tenant whose receiver is slow, or whose backlog is long, leaves the other
   * slots to the others.
   */
  tenantMaxInFlight?: number;
  /** How often the outboxes are looked at without a wake-up (expired leases, other processes' retries, lost wake-ups, new clusters). */
  sweepIntervalMs: number;
  /** Least time between two claims on one cluster (default 10 ms). */
  claimGapMs?: number;
  /** Longest a finished attempt waits for its bookkeeping write (default 20 ms)… */
  flushDelayMs?: number;
  /** …or until this many are waiting (default 200). */
  flushSize?: number;
  /** How long a webhook's enabled flag and secret are reused (default 1 s). */
  stateTtlMs?: number;
  /** How long ended events stay in the outbox (default a week: KEEP_ENDED_EVENTS_MS); each cluster's are deleted by the sweep at most once a minute. */
  keepEndedEventsMs?: number;
  /** A problem (a cluster's when `cluster` is given); delivery goes on. */
  onError?: (e: unknown, cluster?: string) => void;
}

/** Retries due within this are woken by a timer of the process that scheduled them; later ones by any process's sweep. */
const LOCAL_RETRY_MS = 60_000;
/** Retries falling due within one slot share a wake-up timer. */
const RETRY_SLOT_MS = 100;
/** A batch whose write failed is written again (per tenant) after this. */
const RECORD_RETRY_MS = 100;
/** After a failed claim, the next on that cluster waits this long, doubled at each failure in a row up to the most (an outage must not spin). */
const CLAIM_ERROR_PAUSE_MS = 1000;
const MAX_CLAIM_ERROR_PAUSE_MS = 30_000;
/** Each cluster's ended events are deleted at most this often (by each process's sweep). */
const TIDY_EVERY_MS = 60_000;
/** How long a claim not answered yet holds its room (a claim takes milliseconds). */
const CLAIM_RESERVATION_MS = 5000;

interface Claimed {
  e: ClaimedEvent;
  /** performance.now() when it was claimed. */
  at: number;
}

/** One cluster's outbox as this dispatcher drains it. */
interface Lane {
  readonly cluster: string;
  /** Its database as last told (a pool closed while idle is replaced by the next sweep's). */
  db: Database;
  /** Something may be due there: a wake-up came, or the last claim was full. */
  dirty: boolean;
  /** The limit of its claim in flight (0: none): room the claim may fill. */
  claiming: number;
  /** performance.now() before which no claim starts there (the claim gap, or the pause after failures). */
  notBefore: number;
  /** Claims that failed in a row. */
  failures: number;
  /** performance.now() of its last claim (ties between lanes as loaded: the longest waiting first). */
  lastClaim: number;
  /** Claimed events waiting for a free slot. */
  ready: Claimed[];
  /** Tenants a claim here gave their whole share: when one of their attempts ends, they may have more to claim. */
  sharesFull: Set<string>;
  /** Claimed here and whose outcome is not written yet (ready, sending or waiting for the write). */
  unrecorded: number;
  /** Finished attempts waiting for their write. */
  buffer: Attempted[];
  bufferedSince: number;
  flushTimer: NodeJS.Timeout | undefined;
  flushing: boolean;
  /** No longer registered: not claimed from, and dropped once nothing of it is in this process. */
  retired: boolean;
  /** performance.now() of its last deletion of ended events (-Infinity: not yet), and the one running. */
  tidiedAt: number;
  tidying: Promise<void> | undefined;
}

function newLane(o: Outbox): Lane {
  return {
    cluster: o.cluster,
    db: o.db,
    dirty: false,
    claiming: 0,
    notBefore: 0,
    failures: 0,
    lastClaim: 0,
    ready: [],
    sharesFull: new Set(),
    unrecorded: 0,
    buffer: [],
    bufferedSince: 0,
    flushTimer: undefined,
    flushing: false,
    retired: false,
    tidiedAt: -Infinity,
    tidying: undefined,
  };
}

export class Dispatcher {
  private readonly states: WebhookStates;
  private readonly claimGapMs: number;
  private readonly flushDelayMs: number;
  private readonly flushSize: number;
  private readonly tenantMaxInFlight: number;
  /** Per tenant: events claimed here and not yet attempted or in their attempt (ready or sending). */
  private readonly held = new Map<string, number>();
  /** Per tenant: requests in flight. */
  private readonly sendingOf = new Map<string, number>();
  /** The outboxes by cluster, and the same in the order their claimed events take slots. */
  private readonly lanes = new Map<string, Lane>();
  private order: Lane[] = [];
  /** Where in `order` the next free slot looks first. */
  private turn = 0;
  /** Attempts in progress. */
  private sending = 0;
  /** Claimed events waiting for a free slot, over every lane. */
  private readyCount = 0;
  /** Claimed events whose outcome is not written yet, over every lane. */
  private unrecorded = 0;
  /** Room held by claims in flight (the sum of their limits). */
  private reserved = 0;
  private claims = 0;
  /** performance.now() before which no claim starts. */
  private claimTimer: NodeJS.Timeout | undefined;
  private claimTimerAt = 0;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Whether the registry's outboxes are being asked for. */
  private listing = false;
  /** Retry wake-ups by the 100 ms slot they fire in and their cluster. */
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private closed = false;
  private forced = false;
  private idle: (() => void) | undefined;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: DispatcherOptions,
  ) {
    this.states = new WebhookStates(options.stateTtlMs ?? 1000);
    this.claimGapMs = options.claimGapMs ?? 10;
    this.flushDelayMs = options.flushDelayMs ?? 20;
    this.flushSize = options.flushSize ?? 200;
    this.tenantMaxInFlight = options.tenantMaxInFlight ?? Math.max(1, Math.ceil(options.concurrency / 2));
    this.laneOf({ cluster: PLATFORM_OUTBOX, db: deps.db });
  }

  /** Sweeps now and every `sweepIntervalMs`. */
  start(): void {
    if (this.closed || this.sweepTimer) return;
    this.sweepTimer = setInterval(() => this.sweep(), this.options.sweepIntervalMs);
    this.sweepTimer.unref();
    this.sweep();
  }

  /**
   * Events were committed or fell due: claim what is due as soon as slots and the claim gap allow,
   * on the clusters of `tenants` (every cluster without tenants, or when one is not known here).
   */
  wake(...tenants: string[]): void {
    if (this.closed) return;
    const { outboxOf } = this.deps;
    let everywhere = tenants.length === 0 || !outboxOf;
    if (outboxOf) {
      for (const tenant of tenants) {
        const outbox = outboxOf(tenant);
        if (!outbox) {
          everywhere = true;
          break;
        }
        this.laneOf(outbox).dirty = true;
      }
    }
    if (everywhere) for (const lane of this.order) lane.dirty = true;
    this.pump();
  }

  /** Events claimed by this process whose outcome is not written yet. */
  get inFlight(): number {
    return this.unrecorded;
  }

  /** Every outbox is looked at; the registry is asked for clusters added or gone since. */
  private sweep(): void {
    this.wake();
    for (const lane of this.order) this.tidy(lane);
    const { outboxes } = this.deps;
    if (!outboxes || this.listing || this.closed) return;
    this.listing = true;
    outboxes()
      .then(
        (listed) => this.adopt(listed),
        (e: unknown) => this.options.onError?.(e),
      )
      .finally(() => (this.listing = false));
  }

  /** Deletes the lane's ended events past their keeping, at most once a minute; what fails is tried at the next. */
  private tidy(lane: Lane): void {
    const now = performance.now();
    if (lane.tidying || lane.retired || this.closed || now - lane.tidiedAt < TIDY_EVERY_MS) return;
    lane.tidiedAt = now;
    lane.tidying = deleteEndedEvents(lane.db, this.options.keepEndedEventsMs ?? KEEP_ENDED_EVENTS_MS)
      .then(
        () => undefined,
        (e: unknown) => this.options.onError?.(e, lane.cluster),
      )
      .finally(() => {
        lane.tidying = undefined;
        this.dropIfRetired(lane);
      });
  }

  /** The registry's outboxes now: a new one is looked at at once; one no longer listed is drained no more. */
  private adopt(listed: readonly Outbox[]): void {
    if (this.closed) return;
    const names = new Set<string>([PLATFORM_OUTBOX]);
    for (const outbox of listed) {
      names.add(outbox.cluster);
      const known = this.lanes.has(outbox.cluster);
      const lane = this.laneOf(outbox);
      if (!known) lane.dirty = true;
    }
    for (const lane of this.order) {
      if (names.has(lane.cluster)) continue;
      lane.retired = true;
      this.dropIfRetired(lane);
    }
    this.pump();
  }

  /** The lane of an outbox (made when new), its database as given now. */
  private laneOf(outbox: Outbox): Lane {
    let lane = this.lanes.get(outbox.cluster);
    if (lane) {
      lane.db = outbox.db;
      lane.retired = false;
      return lane;
    }
    lane = newLane(outbox);
    this.lanes.set(lane.cluster, lane);
    this.order.push(lane);
    return lane;
  }

  private dropIfRetired(lane: Lane): void {
    if (!lane.retired || lane.unrecorded > 0 || lane.claiming > 0 || lane.ready.length > 0 || lane.flushing || lane.tidying !== undefined) return;
    if (lane.flushTimer) clearTimeout(lane.flushTimer);
    this.lanes.delete(lane.cluster);
    this.order = this.order.filter((l) => l !== lane);
    this.turn = this.order.length === 0 ? 0 : this.turn % this.order.length;
  }

  private pump(): void {
    this.startReady();
    if (this.closed) return;
    // Claimed ahead: up to `concurrency` events wait beside the requests in flight, so a freed slot
    // starts the next request at once instead of after a claim's round trip.
    const { concurrency } = this.options;
    let room = 2 * concurrency - this.sending - this.readyCount - this.reserved;
    if (room <= 0) return; // a finished attempt pumps again
    const now = performance.now();
    let wait = Infinity;
    const due: Lane[] = [];
    for (const lane of this.order) {
      if (!lane.dirty || lane.claiming > 0 || lane.retired) continue;
      if (lane.notBefore > now) wait = Math.min(wait, lane.notBefore - now);
      else due.push(lane);
    }
    // The lanes with the fewest events in this process claim first, each its share of the room: a
    // cluster's backlog never takes the room of the others.
    if (due.length > 1) due.sort((a, b) => a.unrecorded - b.unrecorded || a.lastClaim - b.lastClaim);
    const share = Math.ceil(room / Math.max(1, due.length));
    for (const lane of due) {
      if (room <= 0) break;
      // Bookkeeping waiting to be written is bounded per cluster: a cluster slow to write holds its own share only.
      const limit = Math.min(share, room, 2 * concurrency + this.flushSize - lane.unrecorded);
      if (limit <= 0) continue;
      room -= limit;
      this.claim(lane, limit);
    }
    if (wait < Infinity) this.pumpIn(wait);
  }

  /** A pump after `ms` (an earlier one asked for stays). */
  private pumpIn(ms: number): void {
    const at = performance.now() + ms;
    if (this.claimTimer && this.claimTimerAt <= at) return;
    clearTimeout(this.claimTimer);
    this.claimTimerAt = at;
    this.claimTimer = setTimeout(() => {
      this.claimTimer = undefined;
      this.pump();
    }, ms);
    this.claimTimer.unref();
  }

  private claim(lane: Lane, limit: number): void {
    lane.claiming = limit;
    lane.dirty = false;
    lane.lastClaim = performance.now();
    this.reserved += limit;
    this.claims++;
    // A claim that hangs (a cluster gone silent: connecting waits for TCP to give up) holds its room
    // only so long; the others claim meanwhile (what it brings if it ever answers is taken all the same).
    let reserved = true;
    const unreserve = (): void => {
      if (!reserved) return;
      reserved = false;
      this.reserved -= limit;
    };
    const slow = setTimeout(() => {
      unreserve();
      this.pump();
    }, CLAIM_RESERVATION_MS);
    slow.unref();
    const shares = { max: 2 * this.tenantMaxInFlight, held: new Map(this.held), paused: this.deps.pausedTenants?.() ?? [] };
    claimDue(lane.db, limit, this.deps.leaseMarginMs, shares)
      .then(
        (events) => {
          lane.failures = 0;
          if (events.length >= limit) lane.dirty = true; // there may be more
          const at = performance.now();
          lane.unrecorded += events.length;
          this.unrecorded += events.length;
          lane.notBefore = at + this.claimGapMs;
          for (const e of events) count(this.held, e.tenant, 1);
          this.noteFullShares(lane, shares, events);
          if (this.forced) {
            void this.release(lane, events); // stopped meanwhile: given back at once
            return;
          }
          for (const e of events) lane.ready.push({ e, at });
          this.readyCount += events.length;
        },
        (e: unknown) => {
          this.options.onError?.(e, lane.cluster);
          lane.dirty = true;
          lane.failures++;
          lane.notBefore = performance.now() + Math.min(CLAIM_ERROR_PAUSE_MS * 2 ** (lane.failures - 1), MAX_CLAIM_ERROR_PAUSE_MS);
        },
      )
      .finally(() => {
        clearTimeout(slow);
        unreserve();
        lane.claiming = 0;
        this.claims--;
        this.dropIfRetired(lane);
        this.pump();
        this.checkIdle();
      });
  }

  /** The tenants a claim filled to their share (what they held when it began, and what it brought): those may have more waiting. */
  private noteFullShares(lane: Lane, shares: TenantShares, events: readonly ClaimedEvent[]): void {
    const brought = new Map<string, number>();
    for (const e of events) count(brought, e.tenant, 1);
    for (const tenant of new Set([...shares.held.keys(), ...brought.keys()])) {
      if ((shares.held.get(tenant) ?? 0) + (brought.get(tenant) ?? 0) >= shares.max) lane.sharesFull.add(tenant);
    }
  }

  /**
   * Starts requests for claimed events while slots are free, taking the clusters' events in turn,
   * each lane's in claim order, passing over tenants at their share of the slots.
   */
  private startReady(): void {
    let stale: Map<Lane, ClaimedEvent[]> | undefined;
    while (this.sending < this.options.concurrency && this.readyCount > 0) {
      const found = this.nextReady();
      if (!found) break;
      const [lane, index] = found;
      const [next] = lane.ready.splice(index, 1);
      if (!next) break;
      this.readyCount--;
      // Waited so long (slow receivers held every slot) that its lease could run out mid-request:
      // given back, for any process to take.
      if (performance.now() - next.at > this.deps.leaseMarginMs / 2) {
        stale ??= new Map();
        const events = stale.get(lane);
        if (events) events.push(next.e);
        else stale.set(lane, [next.e]);
      } else this.begin(lane, next.e);
    }
    if (stale) for (const [lane, events] of stale) void this.release(lane, events);
  }

  /** The next lane, in turn, with a claimed event whose tenant is under its share, and where that event is in its list. */
  private nextReady(): [Lane, number] | undefined {
    const n = this.order.length;
    for (let i = 0; i < n; i++) {
      const at = (this.turn + i) % n;
      const lane = this.order[at];
      if (!lane || lane.ready.length === 0) continue;
      const index = lane.ready.findIndex((r) => (this.sendingOf.get(r.e.tenant) ?? 0) < this.tenantMaxInFlight);
      if (index === -1) continue;
      this.turn = (at + 1) % n;
      return [lane, index];
    }
    return undefined;
  }

  /** Gives claimed events back unattempted (their leases end now). */
  private release(lane: Lane, events: ClaimedEvent[]): Promise<void> {
    for (const e of events) count(this.held, e.tenant, -1);
    return releaseClaims(lane.db, events)
      .catch((e: unknown) => this.options.onError?.(e, lane.cluster)) // their leases run out on their own
      .finally(() => {
        lane.unrecorded -= events.length;
        this.unrecorded -= events.length;
        this.dropIfRetired(lane);
        this.checkIdle();
      });
  }

  private begin(lane: Lane, e: ClaimedEvent): void {
    this.sending++;
    count(this.sendingOf, e.tenant, 1);
    const ended = () => {
      this.sending--;
      count(this.sendingOf, e.tenant, -1);
      // A claim gave its tenant its whole share, perhaps leaving events behind: claim again now there is room.
      if (lane.sharesFull.delete(e.tenant)) lane.dirty = true;
      count(this.held, e.tenant, -1);
    };
    attemptDelivery(this.deps, this.states, e, nowDatetime).then(
      (attempted) => {
        ended();
        lane.buffer.push(attempted);
        if (lane.buffer.length === 1) lane.bufferedSince = performance.now();
        this.scheduleFlush(lane);
        this.pump();
      },
      (err: unknown) => {
        // Its state could not be read: the event keeps its lease and is taken again when it runs out.
        ended();
        lane.unrecorded--;
        this.unrecorded--;
        this.options.onError?.(err, lane.cluster);
        this.dropIfRetired(lane);
        this.pump();
        this.checkIdle();
      },
    );
  }

  private scheduleFlush(lane: Lane): void {
    if (lane.flushing || lane.buffer.length === 0) return;
    const wait = this.closed || lane.buffer.length >= this.flushSize ? 0 : lane.bufferedSince + this.flushDelayMs - performance.now();
    if (wait <= 0) {
      this.flush(lane);
      return;
    }
    if (!lane.flushTimer) {
      lane.flushTimer = setTimeout(() => {
        lane.flushTimer = undefined;
        this.scheduleFlush(lane);
      }, wait);
      lane.flushTimer.unref();
    }
  }

  private flush(lane: Lane): void {
    if (lane.flushTimer) clearTimeout(lane.flushTimer);
    lane.flushTimer = undefined;
    const batch = lane.buffer.splice(0, this.flushSize);
    if (lane.buffer.length > 0) lane.bufferedSince = performance.now();
    lane.flushing = true;
    void this.write(lane, batch).finally(() => {
      lane.flushing = false;
      lane.unrecorded -= batch.length;
      this.unrecorded -= batch.length;
      this.scheduleFlush(lane);
      this.dropIfRetired(lane);
      this.pump();
      this.checkIdle();
    });
  }

  /**
   * Writes a batch; if that fails, once more a moment later with each tenant's share on its own (a
   * passing failure is survived, and one tenant's failure does not hold back the others).
   */
  private async write(lane: Lane, batch: Attempted[]): Promise<void> {
    if (await this.tryRecord(lane, batch)) return;
    const byTenant = new Map<string, Attempted[]>();
    for (const a of batch) {
      const share = byTenant.get(a.event.tenant);
      if (share) share.push(a);
      else byTenant.set(a.event.tenant, [a]);
    }
    await new Promise((resolve) => setTimeout(resolve, RECORD_RETRY_MS));
    // Not written then: those events keep their leases and are attempted again when they run out.
    for (const share of byTenant.values()) await this.tryRecord(lane, share);
  }

  private async tryRecord(lane: Lane, batch: readonly Attempted[]): Promise<boolean> {
    try {
      await this.record(lane.db, batch);
    } catch (e) {
      this.options.onError?.(e, lane.cluster);
      return false;
    }
    this.recorded(lane, batch);
    return true;
  }

  /** On the cluster the events were claimed from, which holds their tenants' schemas too. */
  private async record(db: Database, batch: readonly Attempted[]): Promise<void> {
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
      await recordBatch(db, shares, outcomes);
      return;
    }
    await db.transaction(async (tx) => {
      await recordBatch(tx, shares, outcomes);
      // Webhook definitions are cached with the tenant's metadata (outbox.ts, webhook-state.ts):
      // a webhook retired here is dropped from every process's caches, as when it is saved.
      for (const t of disabling) await t.ctx.changes.metaChanged(tx, t.ctx.tenant);
    });
  }

  private recorded(lane: Lane, batch: readonly Attempted[]): void {
    for (const a of batch) {
      this.deps.observer?.attempted({ outcome: a.outcome, durationMs: a.durationMs, attempt: a.attempt, lagMs: a.lagMs });
      const delay = a.result.status === 'pending' ? a.result.nextAttemptInMs : undefined;
      if (delay !== undefined && delay < LOCAL_RETRY_MS) this.wakeAt(lane, Date.now() + delay);
    }
  }

  /**
   * A wake-up of a cluster when a retry falls due there: one timer per 100 ms and cluster, however
   * many retries fall due in it (a failing receiver's backlog must not cost a timer per event).
   */
  private wakeAt(lane: Lane, due: number): void {
    if (this.closed) return;
    const slot = Math.ceil(due / RETRY_SLOT_MS) * RETRY_SLOT_MS;
    const key = `${slot}\0${lane.cluster}`;
    if (this.retryTimers.has(key)) return;
    const timer = setTimeout(
      () => {
        this.retryTimers.delete(key);
        if (this.closed || this.lanes.get(lane.cluster) !== lane) return;
        lane.dirty = true;
        this.pump();
      },
      Math.max(0, slot - Date.now()),
    );
    timer.unref();
    this.retryTimers.set(key, timer);
  }

  private checkIdle(): void {
    if (this.idle && this.unrecorded === 0 && this.claims === 0) this.idle();
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
      this.forced = true;
      const waiting = this.order.map((lane) => {
        const events = lane.ready.splice(0).map((r) => r.e);
        this.readyCount -= events.length;
        return this.release(lane, events);
      });
      await Promise.all(waiting);
      return;
    }
    for (const lane of this.order) this.scheduleFlush(lane);
    for (const lane of this.order) if (lane.tidying) await lane.tidying;
    if (this.unrecorded === 0 && this.claims === 0) return;
    await new Promise<void>((resolve) => (this.idle = resolve));
  }
}

/** Adds `delta` to `key`'s count, forgetting it at 0 (the claim sends only tenants holding something). */
function count(counts: Map<string, number>, key: string, delta: number): void {
  const n = (counts.get(key) ?? 0) + delta;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}
