import { randomBytes } from 'node:crypto';
import { V1MicroTime, type KubernetesObject } from '@kubernetes/client-node';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { ClusterApi } from './cluster';
import { describe } from './errors';

export const REPORTING_CONTROLLER = 'quire.dev/operator';

export interface EventRecorderOptions {
  /** This replica (reportingInstance). */
  identity: string;
  /** The same event (object, reason, note) is not recorded again within this window. */
  dedupeMs?: number;
  logger: Logger;
}

/**
 * Records `events.k8s.io/v1` Events about a Tenant (`kubectl describe tenant` shows them). A failure
 * retried with backoff would repeat its Warning on every attempt, so an identical event is recorded
 * once per window. Recording never fails a reconcile: a lost Event is logged, nothing more.
 */
export class EventRecorder {
  private readonly recent: LRUCache<string, true>;

  constructor(
    private readonly api: ClusterApi,
    private readonly options: EventRecorderOptions,
  ) {
    this.recent = new LRUCache({ max: 10_000, ttl: options.dedupeMs ?? 10 * 60_000 });
  }

  normal(regarding: KubernetesObject, reason: string, action: string, note: string): void {
    this.record(regarding, 'Normal', reason, action, note);
  }

  warning(regarding: KubernetesObject, reason: string, action: string, note: string): void {
    this.record(regarding, 'Warning', reason, action, note);
  }

  private record(regarding: KubernetesObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    const meta = regarding.metadata ?? {};
    const key = [meta.uid, type, reason, note].join('\0');
    if (this.recent.has(key)) return;
    this.recent.set(key, true);
    const name = meta.name ?? 'unknown';
    this.api
      .createEvent({
        metadata: { name: `${name}.${randomBytes(8).toString('hex')}` },
        eventTime: new V1MicroTime(),
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: this.options.identity,
        action,
        reason,
        type,
        note: note.slice(0, 1024),
        regarding: {
          apiVersion: regarding.apiVersion,
          kind: regarding.kind,
          name,
          namespace: meta.namespace,
          uid: meta.uid,
          resourceVersion: meta.resourceVersion,
        },
      })
      .catch((err: unknown) => {
        this.recent.delete(key);
        this.options.logger.warn({ err: describe(err), reason }, 'could not record an Event');
      });
  }
}
