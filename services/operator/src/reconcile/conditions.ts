import { canonicalJson } from './canonical';
import type { Condition, ConditionType, TenantStatus } from '../tenant-resource';

export type ConditionInput = Pick<Condition, 'type' | 'status' | 'reason' | 'message'>;

/**
 * The conditions after setting `next` (Kubernetes API conventions): `lastTransitionTime` changes only
 * when a condition's status flips; every condition carries the generation it was computed for.
 */
export function withConditions(
  current: readonly Condition[] | undefined,
  next: readonly ConditionInput[],
  generation: number | undefined,
  now: Date,
): Condition[] {
  const at = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const byType = new Map<ConditionType, Condition>((current ?? []).map((c) => [c.type, c]));
  for (const input of next) {
    const before = byType.get(input.type);
    byType.set(input.type, {
      ...input,
      lastTransitionTime: before && before.status === input.status ? before.lastTransitionTime : at,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
    });
  }
  const order: ConditionType[] = ['Ready', 'SchemaReady', 'DomainsReady', 'PlanReady', 'ClusterReady'];
  return [...byType.values()].sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
}

/** Ready follows the others: True when all are, else the first failing one's reason and message. */
export function readyCondition(parts: readonly ConditionInput[]): ConditionInput {
  const failing = parts.find((c) => c.status !== 'True');
  if (!failing) return { type: 'Ready', status: 'True', reason: 'Ready', message: 'The tenant is served at every host in status.hosts' };
  return { type: 'Ready', status: failing.status, reason: failing.reason, message: failing.message };
}

/** Whether writing `next` would change anything (status writes are skipped when not). */
export function statusChanged(current: TenantStatus | undefined, next: TenantStatus): boolean {
  return canonicalJson(current ?? {}) !== canonicalJson(next);
}
