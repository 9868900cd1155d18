import { describe, expect, it } from 'vitest';
import { readyCondition, statusChanged, withConditions } from '../src/reconcile/conditions';

const t0 = new Date('2026-11-24T10:00:00.123Z');
const t1 = new Date('2026-11-24T10:05:00.000Z');

describe('conditions', () => {
  it('moves lastTransitionTime only when a status flips, and stamps the generation on each', () => {
    const first = withConditions(undefined, [{ type: 'SchemaReady', status: 'False', reason: 'InvalidSpec', message: 'bad' }], 1, t0);
    expect(first).toEqual([
      { type: 'SchemaReady', status: 'False', reason: 'InvalidSpec', message: 'bad', lastTransitionTime: '2026-11-24T10:00:00Z', observedGeneration: 1 },
    ]);
    const sameStatus = withConditions(first, [{ type: 'SchemaReady', status: 'False', reason: 'InvalidName', message: 'worse' }], 2, t1);
    expect(sameStatus[0]).toMatchObject({ reason: 'InvalidName', lastTransitionTime: '2026-11-24T10:00:00Z', observedGeneration: 2 });
    const flipped = withConditions(sameStatus, [{ type: 'SchemaReady', status: 'True', reason: 'Created', message: 'ok' }], 3, t1);
    expect(flipped[0]).toMatchObject({ status: 'True', lastTransitionTime: '2026-11-24T10:05:00Z' });
  });

  it('orders Ready, SchemaReady, DomainsReady, PlanReady, ClusterReady and derives Ready from the first failing one', () => {
    const schema = { type: 'SchemaReady', status: 'True', reason: 'Adopted', message: 'm' } as const;
    const domains = { type: 'DomainsReady', status: 'False', reason: 'DomainConflict', message: 'Already registered: x (tenant y)' } as const;
    const plan = { type: 'PlanReady', status: 'False', reason: 'UnknownPlan', message: 'spec.plan: No plan named "gold"' } as const;
    expect(readyCondition([schema, domains, plan])).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'DomainConflict',
      message: 'Already registered: x (tenant y)',
    });
    const domainsOk = { ...domains, status: 'True', reason: 'DomainsRegistered' } as const;
    expect(readyCondition([schema, domainsOk, plan])).toMatchObject({ status: 'False', reason: 'UnknownPlan' });
    expect(readyCondition([schema, domainsOk, { ...plan, status: 'True', reason: 'PlanApplied' }])).toMatchObject({ status: 'True', reason: 'Ready' });
    const planOk = { ...plan, status: 'True', reason: 'PlanApplied' } as const;
    const cluster = { type: 'ClusterReady', status: 'False', reason: 'Moving', message: 'Moving tenant acme from cluster a to cluster b: starting' } as const;
    expect(readyCondition([schema, domainsOk, planOk, cluster])).toMatchObject({ status: 'False', reason: 'Moving', message: cluster.message });
    const all = withConditions(undefined, [cluster, plan, domains, schema, readyCondition([schema, domains, plan, cluster])], 1, t0);
    expect(all.map((c) => c.type)).toEqual(['Ready', 'SchemaReady', 'DomainsReady', 'PlanReady', 'ClusterReady']);
  });

  it('sees no change in a status whose keys come in another order', () => {
    expect(statusChanged({ schema: 's', hosts: ['a'] }, { hosts: ['a'], schema: 's' })).toBe(false);
    expect(statusChanged({ schema: 's', hosts: ['a'] }, { schema: 's', hosts: ['a', 'b'] })).toBe(true);
    expect(statusChanged({ schema: 's', adminSecretName: 'x' }, { schema: 's' })).toBe(true);
  });
});
