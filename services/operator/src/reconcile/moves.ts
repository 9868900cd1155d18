import { ValidationError } from '@quire/errors';
import { moveTenant, type MoveInput, type MoveProgress, type MoveReport, type MoveStep, type Platform } from '@quire/tenancy';
import type { Logger } from 'pino';
import type { EventRecorder } from '../kube/events';
import type { TenantResource } from '../tenant-resource';
import type { ConditionInput } from './conditions';

/**
 * The moves between Postgres clusters that `spec.cluster` asks for, run by this process in the
 * background (a move takes minutes; reconciles go on meanwhile and report its step), at most one per
 * tenant. moveTenant is resumable: a failed move is run again with backoff, and one this process
 * leaves when it stops is finished by whichever process runs it next.
 */

/** What the status says of a move: moveTenant's last step, or why it does not run here now. */
export type MovePhase = 'starting' | MoveStep | 'elsewhere' | 'failed';

export interface TrackedMove {
  from: string;
  to: string;
  /** Whether moveTenant runs in this process now. */
  running: boolean;
  phase: MovePhase;
  /** Failed attempts in a row (the backoff). */
  failures: number;
  /** The last failure's message. */
  error?: string;
  /** When it is not running: how long it waits before the next attempt, and until when (Date.now()). */
  waitMs?: number;
  waitUntil?: number;
}

/** A move of a tenant recorded in quire.tenant_moves and not done (another process's, or one cut short). */
export interface UnfinishedMove {
  source: string;
  target: string;
}

export type MoveRunner = (platform: Platform, input: MoveInput) => Promise<MoveReport>;

export interface TenantMovesOptions {
  platform: Platform;
  events: Pick<EventRecorder, 'normal' | 'warning'>;
  /** Reconciles the Tenant again after `ms`: its status then shows where the move is. */
  requeue: (resource: TenantResource, ms: number) => void;
  logger: Logger;
  /** How long a moved tenant's old copy is kept after the switch; moveTenant's default when unset. */
  sourceGraceMs?: number | undefined;
  /** The wait after a failed attempt doubles from base to max. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How often a move another process holds is tried again. */
  recheckMs?: number;
  /** moveTenant, or a stand-in in unit tests. */
  run?: MoveRunner;
}

export const MOVE_RETRY_BASE_MS = 10_000;
export const MOVE_RETRY_MAX_MS = 300_000;
/** How often a move another process runs, or one left unfinished to another cluster, is looked at again. */
export const MOVE_RECHECK_MS = 10_000;

export class TenantMoves {
  private readonly moves = new Map<string, TrackedMove>();
  private readonly running = new Set<Promise<void>>();
  private stopping = false;
  /** Aborted at stop: moves that have not begun their switch stop where they can be resumed (moveTenant's signal). */
  private readonly stopped = new AbortController();

  constructor(private readonly options: TenantMovesOptions) {}

  get(tenant: string): TrackedMove | undefined {
    return this.moves.get(tenant);
  }

  /** Drops what is known of a tenant's move that does not run here (its backoff too): the spec no longer asks for it. */
  forget(tenant: string): void {
    if (this.moves.get(tenant)?.running === false) this.moves.delete(tenant);
  }

  /** Milliseconds before a move that is not running may be tried again (0: now). */
  waitMs(tenant: string, now = Date.now()): number {
    const until = this.moves.get(tenant)?.waitUntil;
    // A timer may fire a hair early: such a requeue counts as due.
    return until === undefined || until - now <= 10 ? 0 : until - now;
  }

  /**
   * Runs (or resumes) the move of `tenant` in the background unless it runs already or the operator
   * is stopping; returns the move as it now stands.
   */
  start(resource: TenantResource, tenant: string, from: string, to: string): TrackedMove {
    const before = this.moves.get(tenant);
    if (before?.running) return before;
    // Stopping: left to whichever process leads next.
    if (this.stopping) return before ?? { from, to, running: false, phase: 'starting', failures: 0 };
    const move: TrackedMove = {
      from,
      to,
      running: true,
      // A move another process holds is shown as such until this one gets the lock and reports a step.
      phase: before?.phase === 'elsewhere' && before.to === to ? 'elsewhere' : 'starting',
      failures: before?.to === to ? before.failures : 0,
    };
    this.moves.set(tenant, move);
    const settled: Promise<void> = this.run(resource, tenant, move).finally(() => this.running.delete(settled));
    this.running.add(settled);
    return move;
  }

  /** Moves that have not begun their switch stop at their next report (resumed later), the others finish; resolves once all have settled. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort(new Error('The operator is stopping: the move is left to resume'));
    await Promise.all(this.running);
  }

  private async run(resource: TenantResource, tenant: string, move: TrackedMove): Promise<void> {
    const run = this.options.run ?? moveTenant;
    try {
      const report = await run(this.options.platform, {
        tenant,
        to: move.to,
        ...(this.options.sourceGraceMs === undefined ? {} : { sourceGraceMs: this.options.sourceGraceMs }),
        onProgress: (p) => this.progress(resource, tenant, move, p),
        signal: this.stopped.signal,
      });
      this.moves.delete(tenant);
      this.finished(resource, report);
    } catch (err) {
      move.running = false;
      if (this.stopping) {
        this.options.logger.info({ tenant, to: move.to, step: move.phase, err: messageOf(err) }, 'operator stopping: move left to resume');
        return;
      }
      if (isMoveUnderWay(err)) this.heldElsewhere(move);
      else this.failed(resource, tenant, move, err);
      this.options.requeue(resource, 0);
    }
  }

  /** A new step is written to status (a reconcile); repeated reports of a step are not. */
  private progress(resource: TenantResource, tenant: string, move: TrackedMove, p: MoveProgress): void {
    if (move.phase === p.step) return;
    if (move.phase === 'starting' || move.phase === 'elsewhere') {
      this.options.events.normal(
        resource,
        'MoveStarted',
        'Move',
        `Moving tenant ${tenant} from cluster ${move.from} to cluster ${move.to}: reads are served throughout, writes held for a moment at the switch`,
      );
      this.options.logger.info({ tenant, from: move.from, to: move.to }, 'moving a tenant');
    }
    move.phase = p.step;
    if (p.step !== 'done') this.options.requeue(resource, 0);
  }

  private finished(resource: TenantResource, report: MoveReport): void {
    const { ms } = report;
    this.options.events.normal(
      resource,
      'Moved',
      'Move',
      `Moved tenant ${report.tenant} from cluster ${report.from} to cluster ${report.to} in ${seconds(ms.total)} (writes held ${ms.writesHeld} ms)`,
    );
    this.options.logger.info({ ...report }, 'moved a tenant');
    this.options.requeue(resource, 0);
  }

  /** Another process runs this tenant's move (a replica, `quire tenant move`): not a failure, looked at again soon. */
  private heldElsewhere(move: TrackedMove): void {
    move.phase = 'elsewhere';
    move.waitMs = this.options.recheckMs ?? MOVE_RECHECK_MS;
    move.waitUntil = Date.now() + move.waitMs;
  }

  private failed(resource: TenantResource, tenant: string, move: TrackedMove, err: unknown): void {
    const base = this.options.retryBaseMs ?? MOVE_RETRY_BASE_MS;
    move.waitMs = Math.min(base * 2 ** move.failures, this.options.retryMaxMs ?? MOVE_RETRY_MAX_MS);
    move.waitUntil = Date.now() + move.waitMs;
    move.phase = 'failed';
    move.failures += 1;
    move.error = messageOf(err);
    this.options.events.warning(resource, 'MoveFailed', 'Move', moveCondition(tenant, move, move.to).message);
    this.options.logger.warn({ tenant, to: move.to, err: move.error, retryInMs: move.waitMs }, 'moving a tenant failed');
  }
}

/** The unfinished move of `tenant` recorded in quire.tenant_moves, if any. */
export async function unfinishedMove(platform: Platform, tenant: string): Promise<UnfinishedMove | undefined> {
  const { rows } = await platform.db.query<UnfinishedMove>(`SELECT "source", "target" FROM quire.tenant_moves WHERE "tenant" = $1 AND "state" <> 'done'`, [
    tenant,
  ]);
  return rows[0];
}

const STEPS: Record<MoveStep | 'starting', string> = {
  starting: 'starting',
  copying: 'copying its tables (step 1 of 4)',
  catching_up: 'catching up with the writes made meanwhile (step 2 of 4)',
  switching: 'switching: writes held, reads served (step 3 of 4)',
  cleaning_up: 'cleaning up the replication and the old copy (step 4 of 4)',
  done: 'done',
};

/** ClusterReady for a move this process knows of; `wanted` is spec.cluster. */
export function moveCondition(tenant: string, move: TrackedMove, wanted: string | undefined): ConditionInput {
  const fromTo = `from cluster ${move.from} to cluster ${move.to}`;
  if (move.running && wanted !== undefined && wanted !== move.to) {
    const message = `A move of tenant ${tenant} ${fromTo} is under way: it is finished first, then the tenant moves on to cluster ${wanted} (spec.cluster)`;
    return { type: 'ClusterReady', status: 'False', reason: 'MoveUnderWay', message };
  }
  if (move.phase === 'failed') {
    const message =
      `Moving tenant ${tenant} ${fromTo} failed (attempt ${move.failures}): ${move.error ?? 'unknown error'}. ` +
      `It is tried again in ${seconds(move.waitMs ?? 0)}, from where it stopped`;
    return { type: 'ClusterReady', status: 'False', reason: 'MoveFailed', message };
  }
  const message =
    move.phase === 'elsewhere'
      ? `Tenant ${tenant} is being moved ${fromTo} by another process (another operator replica, or quire tenant move); ` +
        `looked at again every ${seconds(move.waitMs ?? MOVE_RECHECK_MS)}`
      : `Moving tenant ${tenant} ${fromTo}: ${STEPS[move.phase]}`;
  return { type: 'ClusterReady', status: 'False', reason: 'Moving', message };
}

/** ClusterReady while a move to another cluster than `wanted` is recorded unfinished: it must be finished (or given up) first. */
export function unfinishedMoveCondition(tenant: string, move: UnfinishedMove, wanted: string): ConditionInput {
  const message =
    `spec.cluster is ${wanted}, but a move of tenant ${tenant} from cluster ${move.source} to cluster ${move.target} is unfinished: ` +
    `finish it first (quire tenant move ${tenant} --to ${move.target}, or set spec.cluster to ${move.target}), then the tenant moves to ${wanted}`;
  return { type: 'ClusterReady', status: 'False', reason: 'MoveUnderWay', message };
}

/** moveTenant's refusal while another process holds the tenant's move (or one to another cluster is unfinished). */
function isMoveUnderWay(err: unknown): boolean {
  return err instanceof ValidationError && err.title === 'Move Under Way';
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function seconds(ms: number): string {
  return ms >= 10_000 || ms % 1000 === 0 ? `${Math.round(ms / 1000)} s` : `${(ms / 1000).toFixed(1)} s`;
}
