import { afterEach, describe, expect, it, vi } from 'vitest';
import { TenantGate, type Refusal, type Release, type TenantGateOptions } from '../src/index';

/** The gate's decisions, recorded: who got in (with their release) and who was refused why. */
function harness(options: Partial<TenantGateOptions> = {}) {
  const gate = new TenantGate({
    maxActive: 4,
    maxActivePerTenant: 2,
    minActivePerTenant: 1,
    costUnitMs: 5,
    maxQueuedPerTenant: 3,
    maxWaitMs: 1000,
    ...options,
  });
  const admitted: Array<{ id: string; release: Release }> = [];
  const refused: Array<{ id: string; why: Refusal }> = [];
  const enter = (tenant: string, id: string) =>
    gate.enter(
      tenant,
      (release) => admitted.push({ id, release }),
      (why) => refused.push({ id, why }),
    );
  const release = (id: string) => admitted.find((a) => a.id === id)?.release();
  return { gate, admitted, refused, enter, release, ids: () => admitted.map((a) => a.id) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('TenantGate: fair admission per tenant', () => {
  it('admits at once within the tenant’s share and the process’s, and queues beyond them', () => {
    const h = harness();
    h.enter('a', 'a1');
    h.enter('a', 'a2');
    h.enter('a', 'a3'); // over a's share of 2
    h.enter('b', 'b1');
    expect(h.ids()).toEqual(['a1', 'a2', 'b1']);
    expect(h.gate.stats).toMatchObject({ active: 3, waiting: 1 });
    h.release('a1');
    expect(h.ids()).toEqual(['a1', 'a2', 'b1', 'a3']);
  });

  it('gives freed turns to tenants in turn: one waiting request of a tenant goes before another’s many', () => {
    const h = harness({ maxActive: 2, maxActivePerTenant: 2, maxQueuedPerTenant: 10 });
    h.enter('a', 'a1');
    h.enter('a', 'a2'); // the process is full
    for (let i = 3; i <= 6; i++) h.enter('a', `a${i}`);
    h.enter('b', 'b1');
    h.enter('c', 'c1');
    h.release('a1');
    h.release('a2');
    // a3 (a's turn), then b1 before a4, then c1.
    h.release('a3');
    expect(h.ids().slice(2)).toEqual(['a3', 'b1', 'c1']);
    h.release('b1');
    h.release('c1');
    expect(h.ids().slice(5)).toEqual(['a4', 'a5']);
  });

  it('refuses at once a tenant whose queue is full, and one whose oldest waiter waited maxWaitMs; the sweep refuses that waiter', () => {
    vi.useFakeTimers();
    const h = harness({ maxActivePerTenant: 1, maxQueuedPerTenant: 2, maxWaitMs: 1000 });
    h.enter('a', 'a1');
    h.enter('a', 'a2');
    h.enter('a', 'a3');
    h.enter('a', 'a4'); // queue of 2 is full
    expect(h.refused).toEqual([{ id: 'a4', why: 'queue_full' }]);
    vi.advanceTimersByTime(1000);
    // The sweep refused the waiters that waited their time; another tenant is untouched.
    expect(h.refused.map((r) => r.id)).toEqual(['a4', 'a2', 'a3']);
    h.enter('b', 'b1');
    expect(h.ids()).toEqual(['a1', 'b1']);
    expect(h.gate.stats.refused).toEqual({ queue_full: 1, queue_timeout: 2 });
  });

  it('allows a tenant fewer at once as its requests get slow, down to minActivePerTenant, and more again as they get quick', () => {
    vi.useFakeTimers();
    const h = harness({ maxActive: 10, maxActivePerTenant: 4, minActivePerTenant: 1, costUnitMs: 5, maxQueuedPerTenant: 50 });
    // Slow requests: 100 ms each.
    for (let round = 0; round < 20; round++) {
      h.enter('a', `s${round}`);
      vi.advanceTimersByTime(100);
      h.release(`s${round}`);
    }
    for (let i = 0; i < 4; i++) h.enter('a', `x${i}`);
    expect(h.ids().filter((id) => id.startsWith('x'))).toEqual(['x0']);
    for (let i = 0; i < 4; i++) h.release(`x${i}`);
    // Quick ones bring the allowance back up.
    for (let round = 0; round < 40; round++) {
      h.enter('a', `q${round}`);
      h.release(`q${round}`);
    }
    for (let i = 0; i < 5; i++) h.enter('a', `y${i}`);
    expect(h.ids().filter((id) => id.startsWith('y'))).toEqual(['y0', 'y1', 'y2', 'y3']);
  });

  it('a release counts once, however often it is called', () => {
    const h = harness({ maxActivePerTenant: 1 });
    h.enter('a', 'a1');
    h.enter('a', 'a2');
    h.release('a1');
    h.release('a1');
    h.enter('a', 'a3');
    expect(h.ids()).toEqual(['a1', 'a2']);
    expect(h.gate.stats).toMatchObject({ active: 1, waiting: 1 });
  });
});
