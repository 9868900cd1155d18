import { getPassword, type DocContext } from '@quire/documents';
import type { TenantMeta } from '@quire/meta';

/**
 * What delivery needs of a Webhook document at send time — whether it is still enabled, and the
 * secret it signs with — cached per tenant metadata and webhook for a short time: a backlog of one
 * webhook's events then costs one read of it per `ttlMs`, not one per event (and one secret
 * decryption). Saving or deleting a Webhook is a metadata change (its controller says so), so the
 * entries go with the tenant's metadata as soon as this process reloads it; at the latest a change
 * takes effect after `ttlMs`. A 410 this process receives disables the webhook here at once (`disable`).
 */

export interface WebhookState {
  enabled: boolean;
  /** The signing secret when security is on (and a secret is stored). */
  secret: string | undefined;
}

interface Entry {
  at: number;
  /** Date.now() when it was read: a "not enabled" older than the event it judges is read again. */
  readAt: number;
  state: Promise<WebhookState | undefined>;
  /** Set by a 410: final, never read again. */
  final?: boolean;
}

const MAX_ENTRIES = 10_000;

export class WebhookStates {
  private readonly byMeta = new WeakMap<TenantMeta, Map<string, Entry>>();

  constructor(private readonly ttlMs = 1000) {}

  private entries(meta: TenantMeta): Map<string, Entry> {
    let entries = this.byMeta.get(meta);
    if (!entries) this.byMeta.set(meta, (entries = new Map<string, Entry>()));
    return entries;
  }

  /**
   * The webhook's state, or undefined when it no longer exists. A cached answer that would cancel
   * an event ("disabled", "gone") is only taken when it was read at or after `notBefore` (ms since
   * the epoch: the event's creation): an event written just after its webhook was enabled again is
   * never cancelled by a state read just before.
   */
  async get(ctx: DocContext, name: string, notBefore = 0): Promise<WebhookState | undefined> {
    const entries = this.entries(ctx.meta);
    const now = performance.now();
    const hit = entries.get(name);
    if (hit && now - hit.at < this.ttlMs) {
      const state = await hit.state;
      if (state?.enabled || hit.final || hit.readAt >= notBefore) return state;
    }
    if (entries.size >= MAX_ENTRIES) prune(entries, now - this.ttlMs);
    const state = load(ctx, name);
    const entry: Entry = { at: now, readAt: Date.now(), state };
    entries.set(name, entry);
    // A failed read is not kept: the next event reads again.
    state.catch(() => {
      if (entries.get(name) === entry) entries.delete(name);
    });
    return state;
  }

  /** The receiver answered 410: this process sends nothing more for the webhook (the outcome's write disables its row). */
  disable(ctx: DocContext, name: string): void {
    this.entries(ctx.meta).set(name, { at: performance.now(), readAt: Date.now(), state: Promise.resolve({ enabled: false, secret: undefined }), final: true });
  }
}

function prune(entries: Map<string, Entry>, before: number): void {
  for (const [name, entry] of entries) if (entry.at < before) entries.delete(name);
  if (entries.size >= MAX_ENTRIES) entries.clear();
}

async function load(ctx: DocContext, name: string): Promise<WebhookState | undefined> {
  const { rows } = await ctx.db.query<{ enabled: number; enable_security: number }>(
    `SELECT "enabled", "enable_security" FROM ${ctx.meta.require('Webhook').table} WHERE "name" = $1`,
    [name],
  );
  const row = rows[0];
  if (!row) return undefined;
  const enabled = row.enabled === 1;
  const secret = enabled && row.enable_security === 1 ? await getPassword(ctx, 'Webhook', name, 'webhook_secret') : undefined;
  return { enabled, secret: secret || undefined };
}
