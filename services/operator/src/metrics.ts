import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type ReconcileResult = 'success' | 'invalid' | 'conflict' | 'error';

/** The operator's series, on the process's registry (beside Node's, the pool's and readiness). */
export class OperatorMetrics {
  private readonly reconciles: Counter<'result'>;
  private readonly duration: Histogram;
  private readonly restarts: Counter<'resource'>;
  private readonly leader: Gauge;

  constructor(registry: Registry, depth: () => number) {
    const registers = [registry];
    this.reconciles = new Counter({
      name: 'quire_operator_reconcile_total',
      help: 'Tenant reconciles by result: success, invalid (a spec that cannot be served), conflict (409, retried at once), error (retried with backoff)',
      labelNames: ['result'],
      registers,
    });
    for (const result of ['success', 'invalid', 'conflict', 'error'] satisfies ReconcileResult[]) this.reconciles.inc({ result }, 0);
    this.duration = new Histogram({
      name: 'quire_operator_reconcile_duration_seconds',
      help: 'Time one Tenant reconcile took (creating a tenant installs its schema: seconds; a resync that changes nothing: milliseconds)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    new Gauge({
      name: 'quire_operator_workqueue_depth',
      help: 'Tenant keys waiting for a worker',
      registers,
      collect() {
        this.set(depth());
      },
    });
    this.leader = new Gauge({ name: 'quire_operator_leader', help: '1 while this replica holds the leader Lease and reconciles, else 0', registers });
    this.restarts = new Counter({
      name: 'quire_operator_watch_restarts_total',
      help: 'Informers restarted after a watch error (a dropped watch or 410 Gone is resumed without one)',
      labelNames: ['resource'],
      registers,
    });
  }

  reconciled(result: ReconcileResult, seconds: number): void {
    this.reconciles.inc({ result });
    this.duration.observe(seconds);
  }

  setLeader(leading: boolean): void {
    this.leader.set(leading ? 1 : 0);
  }

  watchRestarted(resource: string): void {
    this.restarts.inc({ resource });
  }
}
