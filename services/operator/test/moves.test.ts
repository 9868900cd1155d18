import { ValidationError } from '@quire/errors';
import type { MoveInput, MoveReport, Platform } from '@quire/tenancy';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { moveCondition, TenantMoves, unfinishedMoveCondition, type TrackedMove } from '../src/reconcile/moves';
import type { TenantResource } from '../src/tenant-resource';

const resource: TenantResource = { apiVersion: 'quire.dev/v1alpha1', kind: 'Tenant', metadata: { name: 'acme', namespace: 'quire', uid: 'u1' } };

/** moveTenant's stand-in: each call waits until the test settles it, and its onProgress is the test's to call. */
function fakeMover() {
  const calls: { input: MoveInput; resolve: (r: MoveReport) => void; reject: (e: unknown) => void; settled: Promise<unknown> }[] = [];
  const run = (_platform: Platform, input: MoveInput): Promise<MoveReport> => {
    let resolve: (r: MoveReport) => void = () => undefined;
    let reject: (e: unknown) => void = () => undefined;
    const promise = new Promise<MoveReport>((res, rej) => ((resolve = res), (reject = rej)));
    calls.push({ input, resolve, reject, settled: promise.catch((e: unknown) => e) });
    return promise;
  };
  return { run, calls };
}

function setUp(options: { retryBaseMs?: number; retryMaxMs?: number } = {}) {
  const mover = fakeMover();
  const events: { type: string; reason: string; note: string }[] = [];
  const requeues: number[] = [];
  const moves = new TenantMoves({
    platform: {} as unknown as Platform,
    events: {
      normal: (_r, reason, _a, note) => events.push({ type: 'Normal', reason, note }),
      warning: (_r, reason, _a, note) => events.push({ type: 'Warning', reason, note }),
    },
    requeue: (_r, ms) => requeues.push(ms),
    logger: pino({ level: 'silent' }),
    sourceGraceMs: 5,
    run: mover.run,
    ...options,
  });
  return { moves, mover, events, requeues };
}

const report: MoveReport = {
  tenant: 'acme',
  from: 'a',
  to: 'b',
  keptSource: false,
  ms: { total: 4321, copy: 2000, catchUp: 300, switch: 400, writesHeld: 312, cleanUp: 1600 },
  rows: 42,
};

/** Lets the fake's settled promise reach TenantMoves' handlers. */
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('moves between clusters', () => {
  it('maps a move to ClusterReady: Moving with its step, MoveFailed, MoveUnderWay', () => {
    const move: TrackedMove = { from: 'a', to: 'b', running: true, phase: 'catching_up', failures: 0 };
    expect(moveCondition('acme', move, 'b')).toEqual({
      type: 'ClusterReady',
      status: 'False',
      reason: 'Moving',
      message: 'Moving tenant acme from cluster a to cluster b: catching up with the writes made meanwhile (step 2 of 4)',
    });
    expect(moveCondition('acme', { ...move, phase: 'elsewhere', waitMs: 10_000 }, 'b')).toMatchObject({
      reason: 'Moving',
      message: expect.stringContaining('by another process (another operator replica, or quire tenant move); looked at again every 10 s'),
    });
    expect(moveCondition('acme', { ...move, running: false, phase: 'failed', failures: 2, error: 'boom', waitMs: 20_000 }, 'b')).toEqual({
      type: 'ClusterReady',
      status: 'False',
      reason: 'MoveFailed',
      message: 'Moving tenant acme from cluster a to cluster b failed (attempt 2): boom. It is tried again in 20 s, from where it stopped',
    });
    // spec.cluster changed mid-move: the move is finished first.
    expect(moveCondition('acme', move, 'c')).toMatchObject({
      reason: 'MoveUnderWay',
      message: expect.stringContaining('then the tenant moves on to cluster c'),
    });
    // spec.cluster removed mid-move: still reported as it goes on.
    expect(moveCondition('acme', move, undefined)).toMatchObject({ reason: 'Moving' });
    expect(unfinishedMoveCondition('acme', { source: 'a', target: 'b' }, 'c')).toEqual({
      type: 'ClusterReady',
      status: 'False',
      reason: 'MoveUnderWay',
      message:
        'spec.cluster is c, but a move of tenant acme from cluster a to cluster b is unfinished: ' +
        'finish it first (quire tenant move acme --to b, or set spec.cluster to b), then the tenant moves to c',
    });
  });

  it('runs one move per tenant in the background, requeues on each new step only, and reports MoveStarted and Moved', async () => {
    const { moves, mover, events, requeues } = setUp();
    expect(moves.start(resource, 'acme', 'a', 'b')).toMatchObject({ running: true, phase: 'starting' });
    expect(moves.start(resource, 'acme', 'a', 'b').running).toBe(true);
    expect(mover.calls).toHaveLength(1); // not a second one
    const { input } = mover.calls[0]!;
    expect(input).toMatchObject({ tenant: 'acme', to: 'b', sourceGraceMs: 5 });

    input.onProgress?.({ step: 'copying' });
    input.onProgress?.({ step: 'copying', tables: { ready: 1, total: 9 } });
    input.onProgress?.({ step: 'copying', tables: { ready: 9, total: 9 } });
    input.onProgress?.({ step: 'catching_up', lagBytes: 100 });
    input.onProgress?.({ step: 'catching_up', lagBytes: 0 });
    expect(moves.get('acme')?.phase).toBe('catching_up');
    expect(requeues).toEqual([0, 0]);
    expect(events.map((e) => e.reason)).toEqual(['MoveStarted']);

    for (const step of ['switching', 'cleaning_up', 'done'] as const) input.onProgress?.({ step });
    mover.calls[0]!.resolve(report);
    await tick();
    expect(moves.get('acme')).toBeUndefined();
    expect(events.at(-1)).toEqual({ type: 'Normal', reason: 'Moved', note: 'Moved tenant acme from cluster a to cluster b in 4.3 s (writes held 312 ms)' });
    expect(requeues).toEqual([0, 0, 0, 0, 0]);
  });

  it('retries a failed move with backoff doubling to its cap, keeping the count across attempts until one succeeds', async () => {
    const { moves, mover, events } = setUp({ retryBaseMs: 1000, retryMaxMs: 3000 });
    const waits: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      moves.start(resource, 'acme', 'a', 'b');
      mover.calls.at(-1)!.reject(new ValidationError('Cluster b has wal_level=replica', { title: 'Logical Replication Off' }));
      await tick();
      const move = moves.get('acme')!;
      expect(move).toMatchObject({ running: false, phase: 'failed', failures: attempt + 1, error: 'Cluster b has wal_level=replica' });
      waits.push(move.waitMs!);
      expect(moves.waitMs('acme')).toBeGreaterThan(move.waitMs! - 100);
    }
    expect(waits).toEqual([1000, 2000, 3000, 3000]);
    expect(events.filter((e) => e.reason === 'MoveFailed')).toHaveLength(4);
    expect(events[0]).toMatchObject({ type: 'Warning', note: expect.stringContaining('failed (attempt 1): Cluster b has wal_level=replica') });

    moves.start(resource, 'acme', 'a', 'b');
    expect(moves.get('acme')).toMatchObject({ running: true, phase: 'starting', failures: 4 });
    mover.calls.at(-1)!.resolve(report);
    await tick();
    expect(moves.get('acme')).toBeUndefined();

    // A move to another cluster starts its count again; forget() drops what is not running.
    moves.start(resource, 'acme', 'b', 'c');
    mover.calls.at(-1)!.reject(new Error('boom'));
    await tick();
    expect(moves.get('acme')).toMatchObject({ failures: 1, waitMs: 1000 });
    moves.forget('acme');
    expect(moves.get('acme')).toBeUndefined();
  });

  it("takes 'Move Under Way' (another process holds the move) for no failure: shown as such, tried again without backoff", async () => {
    const { moves, mover, events } = setUp();
    moves.start(resource, 'acme', 'a', 'b');
    mover.calls[0]!.reject(new ValidationError('Another move of this tenant is running', { title: 'Move Under Way' }));
    await tick();
    expect(moves.get('acme')).toMatchObject({ running: false, phase: 'elsewhere', failures: 0, waitMs: 10_000 });
    expect(events).toEqual([]);
    // Tried again: shown as another process's until this one reports a step (no status flapping).
    expect(moves.start(resource, 'acme', 'a', 'b')).toMatchObject({ running: true, phase: 'elsewhere' });
    mover.calls[1]!.input.onProgress?.({ step: 'cleaning_up' });
    expect(moves.get('acme')?.phase).toBe('cleaning_up');
    expect(events.map((e) => e.reason)).toEqual(['MoveStarted']);
  });

  it('when stopping, aborts the moves (moveTenant leaves one that is copying, finishes one cleaning up), and starts none', async () => {
    const { moves, mover, events, requeues } = setUp();
    moves.start(resource, 'acme', 'a', 'b');
    moves.start(resource, 'other', 'a', 'b');
    const [copying, cleaning] = mover.calls;
    copying!.input.onProgress?.({ step: 'copying' });
    cleaning!.input.onProgress?.({ step: 'cleaning_up' });
    const requeued = requeues.length;
    let stopped = false;
    const stopping = moves.stop().then(() => (stopped = true));

    expect(copying!.input.signal?.aborted).toBe(true);
    copying!.reject(copying!.input.signal?.reason); // what moveTenant does before its switch
    cleaning!.input.onProgress?.({ step: 'done' }); // a move past its switch finishes
    await tick();
    expect(stopped).toBe(false);
    cleaning!.resolve({ ...report, tenant: 'other' });
    await stopping;
    expect(moves.get('acme')).toMatchObject({ running: false });
    expect(events.filter((e) => e.type === 'Warning')).toEqual([]);
    expect(events.at(-1)?.reason).toBe('Moved');
    expect(requeues.length).toBe(requeued + 1); // the Moved one only (a no-op on a shut queue)

    expect(moves.start(resource, 'third', 'a', 'b')).toMatchObject({ running: false });
    expect(mover.calls).toHaveLength(2);
  });
});
