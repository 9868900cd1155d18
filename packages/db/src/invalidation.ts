import type { Database, Queryable, Transaction, Unlisten } from './database';

/**
 * Cross-process cache invalidation over Postgres LISTEN/NOTIFY. A notification sent inside a
 * transaction is delivered when it commits, so readers never reload state that is not visible yet.
 */
export const INVALIDATION_CHANNEL = 'quire_invalidate';

export type InvalidationTopic = 'meta' | 'tenant' | 'user' | 'session' | 'oauth' | 'cluster';

export interface InvalidationMessage {
  topic: InvalidationTopic;
  tenant: string;
  /**
   * Topic-specific key, e.g. the user whose roles or keys changed; for `oauth`, `token:<jti>` or
   * `grant:<grant id>` (revoked), `keys` (signing keys changed), or none (re-read the tenant's).
   */
  key?: string;
}

export async function publishInvalidation(q: Queryable, message: InvalidationMessage): Promise<void> {
  await q.query('SELECT pg_notify($1, $2)', [INVALIDATION_CHANNEL, JSON.stringify(message)]);
}

export interface InvalidationHandlers {
  onMessage(message: InvalidationMessage): void;
  /** Notifications may have been missed: drop everything cached. */
  onReset(): void;
}

export function subscribeInvalidations(db: Database, handlers: InvalidationHandlers): Promise<Unlisten> {
  return db.listen(INVALIDATION_CHANNEL, {
    onMessage(payload) {
      let message: InvalidationMessage;
      try {
        message = JSON.parse(payload) as InvalidationMessage;
      } catch {
        return;
      }
      handlers.onMessage(message);
    },
    onReset: () => handlers.onReset(),
  });
}

/**
 * Changes that other processes cache: each call bumps what must be bumped inside `tx`, notifies
 * other processes when it commits, and drops this process's copy right after commit, so the
 * writer's next request already sees the change.
 */
export interface ChangeNotifier {
  metaChanged(tx: Transaction, tenant: { name: string }): Promise<void>;
  /** A user's roles, keys or status changed: cached credentials and sessions of that user go. */
  userChanged(tx: Transaction, tenant: { name: string }, user: string): Promise<void>;
  /** One login session ended or changed (logout, a CSRF token issued): its cached copy goes everywhere. */
  sessionChanged(tx: Transaction, tenant: { name: string }, sidHash: string): Promise<void>;
  /**
   * An OAuth access token (by `jti`) or a whole grant was revoked — call it in the transaction
   * that records the revocation (recordRevocation): every API process refuses the token(s) at
   * once when it commits (within seconds even if the notification is lost: they also poll).
   */
  tokenRevoked(tx: Transaction, tenant: { name: string }, kind: 'token' | 'grant', id: string): Promise<void>;
  /**
   * Webhook events were written to the outbox in `tx`: when it commits, whatever delivers them in
   * this process is woken with their ids (`ids` may still grow until then). Nothing is lost if no
   * one listens: delivery also sweeps the outbox.
   */
  webhookEventsWritten(tx: Transaction, tenant: { name: string }, ids: readonly string[]): void;
  /**
   * A document was saved or deleted in `tx`: when it commits, this process's realtime listeners
   * are told (sockets subscribed to it or its DocType); a rolled-back change tells no one.
   */
  documentChanged(tx: Transaction, tenant: { name: string }, change: DocumentChange): void;
  /** Frappe's publish_realtime: a message for sockets, at once or (given `tx`) when it commits. */
  publishRealtime(tx: Transaction | undefined, tenant: { name: string }, message: RealtimeMessage): void;
}

/** A committed change of one document, as realtime tells it. */
export interface DocumentChange {
  doctype: string;
  name: string;
  modified: string;
  /**
   * The users it is (or was, before this change) an owner's document of, for `if_owner` rights:
   * its owner and the users in its DocType's owner fields. Sockets that may read only their own
   * documents hear only of those.
   */
  owners: readonly string[];
  /** Who changed it. */
  user: string;
  /** Whether lists of the DocType are told too (not for singles, child tables or read-only DocTypes). */
  list: boolean;
}

/** Where a realtime message goes: one user's sockets, a DocType's or a document's subscribers, a named room, or everyone (no target). */
export type RealtimeTarget = { user: string } | { doctype: string; docname?: string } | { room: string } | Record<string, never>;

export interface RealtimeMessage {
  event: string;
  message: unknown;
  target: RealtimeTarget;
}
