import type { KubernetesObject, V1Ingress, V1Secret } from '@kubernetes/client-node';
import type { Platform } from '@quire/tenancy';
import type { Logger } from 'pino';
import type { OperatorConfig } from './config';
import { ClusterApi } from './kube/cluster';
import { describe } from './kube/errors';
import { EventRecorder } from './kube/events';
import { WatchedCache } from './kube/informer';
import { LeaderElector } from './kube/leader-election';
import { WorkQueue } from './kube/workqueue';
import type { OperatorMetrics } from './metrics';
import { TenantMoves } from './reconcile/moves';
import { ConflictError, TenantReconciler } from './reconcile/tenant-reconciler';
import { UsageReadings } from './reconcile/usage';
import { keyOf, MANAGED_BY, TENANT_LABEL, type TenantResource } from './tenant-resource';

const MANAGED_SELECTOR = Object.entries(MANAGED_BY)
  .map(([k, v]) => `${k}=${v}`)
  .join(',');

/** A 409 is retried this soon (the newer version is usually in the cache by then). */
const CONFLICT_RETRY_MS = 100;

export interface ControllerOptions {
  platform: Platform;
  api: ClusterApi;
  config: OperatorConfig;
  identity: string;
  metrics: (queue: WorkQueue) => OperatorMetrics;
  logger: Logger;
}

/**
 * The Tenant controller: informers on Tenants and on the Ingresses and Secrets it made feed a
 * deduplicating queue of Tenant keys (level-triggered: any event means "look again"); workers
 * reconcile keys only while this replica holds the leader Lease. Every Tenant is queued again each
 * resync period, so drift is repaired even without an event; and each usage refresh period the
 * leader reads every Tenant's usage in batches and queues those whose status.usage it changes.
 */
export class TenantController {
  readonly queue: WorkQueue;
  readonly tenants: WatchedCache<TenantResource>;
  private readonly ingresses: WatchedCache<V1Ingress>;
  private readonly secrets: WatchedCache<V1Secret>;
  private readonly reconciler: TenantReconciler;
  private readonly usage: UsageReadings;
  private readonly moves: TenantMoves;
  private readonly elector: LeaderElector;
  private readonly metrics: OperatorMetrics;
  private readonly logger: Logger;
  private workers: Promise<void>[] = [];
  /** Resolved while leading; workers wait on it while not. */
  private leading: Promise<void>;
  private startLeading: () => void = () => undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private usageTimer: NodeJS.Timeout | undefined;
  private refreshingUsage: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: ControllerOptions) {
    const { api, config, logger } = options;
    this.logger = logger;
    this.queue = new WorkQueue({ backoffBaseMs: config.backoffBaseMs, backoffMaxMs: config.backoffMaxMs });
    this.metrics = options.metrics(this.queue);
    const kc = api.kubeConfig;
    const restarted = (resource: string) => () => this.metrics.watchRestarted(resource);
    this.tenants = new WatchedCache<TenantResource>(kc, {
      resource: 'tenants',
      path: api.tenantsPath,
      list: () => api.listTenants(),
      onChange: (tenant) => this.queue.add(keyOf(tenant)),
      onRestart: restarted('tenants'),
      logger,
    });
    // What the operator made points back at its Tenant by label: a change or deletion there queues it.
    const owner = (obj: KubernetesObject) => {
      const tenant = obj.metadata?.labels?.[TENANT_LABEL];
      if (tenant) this.queue.add(`${api.namespace}/${tenant}`);
    };
    this.ingresses = new WatchedCache<V1Ingress>(kc, {
      resource: 'ingresses',
      path: api.ingressesPath,
      list: () => api.listIngresses(MANAGED_SELECTOR),
      labelSelector: MANAGED_SELECTOR,
      onChange: owner,
      onRestart: restarted('ingresses'),
      logger,
    });
    this.secrets = new WatchedCache<V1Secret>(kc, {
      resource: 'secrets',
      path: api.secretsPath,
      list: () => api.listSecrets(MANAGED_SELECTOR),
      labelSelector: MANAGED_SELECTOR,
      onChange: owner,
      onRestart: restarted('secrets'),
      logger,
    });
    const events = new EventRecorder(api, { identity: options.identity, logger });
    this.usage = new UsageReadings(options.platform, config.usageRefreshSeconds * 1000);
    const requeue = (tenant: TenantResource, ms: number) => this.queue.addAfter(keyOf(tenant), ms);
    this.moves = new TenantMoves({ platform: options.platform, events, requeue, logger, sourceGraceMs: config.moveSourceGraceMs });
    this.reconciler = new TenantReconciler({
      platform: options.platform,
      api,
      ingresses: this.ingresses,
      secrets: this.secrets,
      events,
      ingress: config,
      usage: this.usage,
      moves: this.moves,
      requeue,
      logger,
    });
    this.elector = new LeaderElector(api, {
      leaseName: config.leaseName,
      identity: options.identity,
      leaseDurationSeconds: config.leaseDurationSeconds,
      renewDeadlineMs: config.renewDeadlineMs,
      retryPeriodMs: config.retryPeriodMs,
      logger,
      onStartedLeading: () => this.lead(),
      onStoppedLeading: () => this.follow(),
    });
    this.metrics.setLeader(false);
    this.leading = this.nextLeadership();
  }

  get isLeader(): boolean {
    return this.elector.isLeader;
  }

  /** undefined when every informer has listed and is watching; else why not (for /readyz). */
  get problem(): string | undefined {
    const problems = (
      [
        ['tenants', this.tenants],
        ['ingresses', this.ingresses],
        ['secrets', this.secrets],
      ] as const
    ).flatMap(([name, cache]) => (cache.problem === undefined ? [] : [`${name} ${cache.problem}`]));
    return problems.length ? problems.join('; ') : undefined;
  }

  /** Starts the informers (every replica keeps its caches warm), the workers (idle until leading), then leader election. */
  async start(): Promise<void> {
    await Promise.all([this.tenants.start(), this.ingresses.start(), this.secrets.start()]);
    this.workers = Array.from({ length: this.options.config.workers }, () => this.work());
    this.elector.start();
    const every = this.options.config.resyncSeconds * 1000;
    if (every > 0) {
      this.resyncTimer = setInterval(() => this.enqueueAll(), every);
      this.resyncTimer.unref();
    }
    const usageEvery = this.options.config.usageRefreshSeconds * 1000;
    if (usageEvery > 0) {
      this.usageTimer = setInterval(() => void this.refreshUsage(), usageEvery);
      this.usageTimer.unref();
    }
  }

  /**
   * Stops taking work, lets reconciles in flight finish, releases the Lease, stops watching, then
   * waits for the moves running here: those still copying stop at once (resumed by the next leader),
   * one switching or cleaning up finishes, within the caller's deadline (OperatorService.close).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resyncTimer);
    clearInterval(this.usageTimer);
    this.queue.shutDown();
    const moves = this.moves.stop();
    this.startLeading(); // wakes idle workers, which then find the queue shut
    await Promise.all(this.workers);
    await this.refreshingUsage;
    await this.elector.stop();
    await Promise.all([this.tenants.stop(), this.ingresses.stop(), this.secrets.stop()]);
    await moves;
  }

  private enqueueAll(): void {
    for (const tenant of this.tenants.list()) this.queue.add(keyOf(tenant));
  }

  private nextLeadership(): Promise<void> {
    return new Promise((resolve) => (this.startLeading = resolve));
  }

  private lead(): void {
    this.metrics.setLeader(true);
    // Usage read in batches first: the reconciles that follow find it fresh instead of each reading its own.
    void this.refreshUsage().finally(() => {
      if (this.stopped || !this.elector.isLeader) return;
      this.enqueueAll();
      this.startLeading();
    });
  }

  /** Reads every Tenant's usage (leader only, one run at a time) and queues the Tenants whose status.usage it changes. */
  private refreshUsage(): Promise<void> {
    if (this.options.config.usageRefreshSeconds === 0) return Promise.resolve();
    this.refreshingUsage ??= this.refreshUsageNow().finally(() => (this.refreshingUsage = undefined));
    return this.refreshingUsage;
  }

  private async refreshUsageNow(): Promise<void> {
    if (!this.elector.isLeader) return;
    const resources = this.tenants.list();
    try {
      await this.usage.refresh(resources.map((r) => r.metadata?.name ?? ''));
    } catch (err) {
      this.logger.warn({ err: describe(err) }, "could not read the tenants' usage");
      return;
    }
    for (const resource of resources) if (this.usage.outdated(resource)) this.queue.add(keyOf(resource));
  }

  private follow(): void {
    this.metrics.setLeader(false);
    // Workers notice at their next key; a reconcile in flight finishes (its writes are conditional).
    this.leading = this.nextLeadership();
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      await this.leading;
      const key = await this.queue.get();
      if (key === undefined) return;
      if (!this.elector.isLeader) {
        this.queue.done(key);
        this.queue.add(key); // kept for whoever leads here next
        continue;
      }
      try {
        await this.process(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: string): Promise<void> {
    const [namespace = '', name = ''] = key.split('/');
    const tenant = this.tenants.get(name, namespace);
    if (!tenant) {
      this.queue.forget(key);
      return;
    }
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const outcome = await this.reconciler.reconcile(tenant);
      this.queue.forget(key);
      this.metrics.reconciled(outcome === 'invalid' ? 'invalid' : 'success', seconds());
    } catch (err) {
      if (err instanceof ConflictError) {
        this.metrics.reconciled('conflict', seconds());
        this.logger.debug({ tenant: key, err: err.message }, 'conflict: reconciling again');
        // The newer object's watch event queues it too; this is the fallback should that be slow.
        this.queue.addAfter(key, CONFLICT_RETRY_MS);
        return;
      }
      this.metrics.reconciled('error', seconds());
      const delay = this.queue.addRateLimited(key);
      this.logger.warn({ tenant: key, err: describe(err), retryInMs: delay }, 'reconcile failed');
      await this.reconciler.recordFailure(tenant, err);
    }
  }
}
