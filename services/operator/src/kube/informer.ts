import { makeInformer, type Informer, type KubeConfig, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describe } from './errors';

export interface WatchedCacheOptions<T extends KubernetesObject> {
  /** For logs and metrics: `tenants`, `ingresses`, `secrets`. */
  resource: string;
  /** The watch path, e.g. `/apis/quire.dev/v1alpha1/namespaces/quire/tenants`. */
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string | undefined;
  /** Told every object added, changed or deleted (also after a relist). */
  onChange: (obj: T, type: 'add' | 'update' | 'delete') => void;
  /** Told each restart after a watch error. */
  onRestart?: () => void;
  /** Restart backoff after an error: doubles from 1 s to this (client-node's own reconnect cap). */
  maxRestartDelayMs?: number;
  logger: Logger;
}

/**
 * A client-node informer (list, then watch from the list's resourceVersion; relist after a dropped
 * watch's `410 Gone`) that is restarted after any other error, which stops a client-node informer
 * for good. Restarts back off (1 s doubling, capped) so a failing API server is not hammered
 * (client-node #1933); any event resets the backoff.
 */
export class WatchedCache<T extends KubernetesObject> {
  private readonly informer: Informer<T> & ObjectCache<T>;
  private stopped = false;
  private synced = false;
  private failing: string | undefined;
  private restartDelayMs = 0;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    kc: KubeConfig,
    private readonly options: WatchedCacheOptions<T>,
  ) {
    this.informer = makeInformer(kc, options.path, () => options.list(), options.labelSelector);
    this.informer.on('add', (obj) => this.event(obj, 'add'));
    this.informer.on('update', (obj) => this.event(obj, 'update'));
    this.informer.on('delete', (obj) => this.event(obj, 'delete'));
    this.informer.on('connect', () => {
      this.failing = undefined;
    });
    this.informer.on('error', (err: unknown) => this.restart(err));
  }

  /** Lists and starts watching; resolves once the first list is in the cache (or failed: restarts follow). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.informer.start();
    if (this.failing === undefined) this.synced = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    await this.informer.stop();
  }

  get(name: string, namespace: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  list(): readonly T[] {
    return this.informer.list();
  }

  /** undefined when listed and watching; otherwise why not (for /readyz). */
  get problem(): string | undefined {
    if (!this.synced) return this.failing === undefined ? 'not listed yet' : `failing: ${this.failing}`;
    return this.failing === undefined ? undefined : `watch failing: ${this.failing}`;
  }

  private event(obj: T, type: 'add' | 'update' | 'delete'): void {
    this.restartDelayMs = 0;
    this.failing = undefined;
    this.options.onChange(obj, type);
  }

  private restart(err: unknown): void {
    this.failing = describe(err);
    if (this.stopped) return;
    this.restartDelayMs = Math.min(this.restartDelayMs > 0 ? this.restartDelayMs * 2 : 1000, this.options.maxRestartDelayMs ?? 30_000);
    this.options.logger.warn({ resource: this.options.resource, err: this.failing, retryInMs: this.restartDelayMs }, 'watch failed: restarting the informer');
    this.options.onRestart?.();
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (this.stopped) return;
      void this.informer.start().then(() => {
        if (this.failing === undefined) this.synced = true;
      });
    }, this.restartDelayMs);
    this.restartTimer.unref();
  }
}
