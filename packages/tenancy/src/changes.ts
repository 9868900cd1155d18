import type { ApiKeyAuthenticator, SessionAuthenticator } from '@quire/auth';
import { publishInvalidation, type ChangeNotifier, type DocumentChange, type Queryable, type RealtimeMessage, type Transaction } from '@quire/db';
import type { MetaRegistry, TenantRef } from '@quire/meta';
import type { OAuthRuntime } from '@quire/oauth';

/**
 * How writes tell every API process that cached state changed: a version bump and a NOTIFY in
 * the writing transaction (delivered on commit), and this process's caches dropped right after
 * commit so the writer's next request already sees the change.
 */
/** Told, after commit, of the webhook events a transaction wrote (a queue producer, an in-process runner). */
export type WebhookEventsListener = (tenant: string, ids: readonly string[]) => void;

/** Told of committed document changes and realtime messages (the API's realtime server). */
export interface RealtimeListener {
  /** Whether anyone may hear of this tenant's changes (sockets connected somewhere): if not, nothing is queued. */
  wanted(tenant: string): boolean;
  documentChanged(tenant: string, change: DocumentChange): void;
  message(tenant: string, message: RealtimeMessage): void;
}

export class PlatformChanges implements ChangeNotifier {
  private readonly webhookListeners = new Set<WebhookEventsListener>();
  private readonly realtimeListeners = new Set<RealtimeListener>();

  constructor(
    /** The platform database (quire.tenants), which may not be the one a tenant's transaction runs on. */
    private readonly platformDb: Queryable,
    private readonly metas: MetaRegistry,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly sessions: SessionAuthenticator,
    private readonly oauth: OAuthRuntime,
  ) {}

  /**
   * The notification goes out with the change, on the tenant's own cluster (every process listens
   * on the clusters it uses). The version, which only the periodic check for missed notifications
   * reads, is bumped in the platform database once the change committed: the tenant may be on
   * another cluster, and a tenant's DocType change then holds no platform row.
   */
  async metaChanged(tx: Transaction, tenant: TenantRef): Promise<void> {
    await publishInvalidation(tx, { topic: 'meta', tenant: tenant.name });
    tx.afterCommit(() => {
      this.metas.invalidate(tenant.name);
      this.platformDb.query(`UPDATE quire.tenants SET "meta_version" = "meta_version" + 1 WHERE "name" = $1`, [tenant.name]).catch(() => {});
    });
  }

  async userChanged(tx: Transaction, tenant: TenantRef, user: string): Promise<void> {
    await publishInvalidation(tx, { topic: 'user', tenant: tenant.name, key: user });
    tx.afterCommit(() => {
      this.apiKeys.invalidate(tenant.name, user);
      this.sessions.invalidate(tenant.name, { user });
      this.oauth.invalidateUser(tenant.name, user);
    });
  }

  async sessionChanged(tx: Transaction, tenant: TenantRef, sidHash: string): Promise<void> {
    await publishInvalidation(tx, { topic: 'session', tenant: tenant.name, key: sidHash });
    tx.afterCommit(() => this.sessions.invalidate(tenant.name, { sidHash }));
  }

  async tokenRevoked(tx: Transaction, tenant: { name: string }, kind: 'token' | 'grant', id: string): Promise<void> {
    await publishInvalidation(tx, { topic: 'oauth', tenant: tenant.name, key: `${kind}:${id}` });
    tx.afterCommit(() => this.oauth.revocations.apply(tenant.name, kind, id));
  }

  webhookEventsWritten(tx: Transaction, tenant: { name: string }, ids: readonly string[]): void {
    tx.afterCommit(() => {
      if (ids.length === 0) return;
      for (const listener of this.webhookListeners) listener(tenant.name, ids);
    });
  }

  documentChanged(tx: Transaction, tenant: { name: string }, change: DocumentChange): void {
    // No socket server here, or no socket of this tenant anywhere: nothing to queue.
    let wanted = false;
    for (const listener of this.realtimeListeners) wanted ||= listener.wanted(tenant.name);
    if (!wanted) return;
    tx.afterCommit(() => {
      for (const listener of this.realtimeListeners) listener.documentChanged(tenant.name, change);
    });
  }

  publishRealtime(tx: Transaction | undefined, tenant: { name: string }, message: RealtimeMessage): void {
    const send = () => {
      for (const listener of this.realtimeListeners) listener.message(tenant.name, message);
    };
    if (tx) tx.afterCommit(send);
    else send();
  }

  /** Subscribes to committed document changes and realtime messages; returns the unsubscribe function. */
  onRealtime(listener: RealtimeListener): () => void {
    this.realtimeListeners.add(listener);
    return () => this.realtimeListeners.delete(listener);
  }

  /** Subscribes to committed webhook events; returns the unsubscribe function. */
  onWebhookEvents(listener: WebhookEventsListener): () => void {
    this.webhookListeners.add(listener);
    return () => this.webhookListeners.delete(listener);
  }

  /** A tenant's OAuth signing keys changed (rotation): verifiers and issuers everywhere reload them. */
  async signingKeysChanged(tx: Transaction, tenant: { name: string }): Promise<void> {
    await publishInvalidation(tx, { topic: 'oauth', tenant: tenant.name, key: 'keys' });
    tx.afterCommit(() => this.oauth.onMessage(tenant.name, 'keys'));
  }
}
