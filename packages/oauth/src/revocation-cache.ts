import { qualified, type Queryable, type TenantDatabases } from '@quire/db';
import { LRUCache } from 'lru-cache';
import { loadRevocations, REVOCATIONS_TABLE } from './revocations';

/**
 * Every API process's copy of each tenant's revoked access tokens (`jti`) and grants (grant id),
 * so the per-request check is two Set lookups and no query.
 *
 * How a revocation reaches every process within 5 seconds:
 * 1. the revoking transaction writes the row (recordRevocation) and, through
 *    ChangeNotifier.tokenRevoked, a NOTIFY on the invalidation channel; the writer's own process
 *    adds the id right after commit, every other process when the notification arrives (ms);
 * 2. in case a notification is lost (a listener reconnecting, a writer that only wrote the row),
 *    every process re-reads the sets of the tenants it served recently every `pollIntervalMs`
 *    (3 s; one UNION ALL query per batch of tenants), so the worst case is one interval plus one
 *    query. A tenant not used for `idleMs` is dropped and loaded afresh on its next use, and so is
 *    the least recently used one beyond MAX_TENANTS.
 * Records expire with the token they revoke (recordRevocation's `expiresInSeconds`).
 */

export interface RevocationCacheOptions {
  /** How often the sets of recently used tenants are re-read (0 disables the poll). */
  pollIntervalMs?: number;
  /** A tenant unused this long is dropped (and loaded again on its next use). */
  idleMs?: number;
  /** Tenants read per poll query. */
  batchSize?: number;
  /** A poll that failed (the previous sets stay in use until the next poll). */
  onError?: (e: unknown) => void;
}

export interface RevocationTenant {
  name: string;
  schema: string;
}

type Kind = 'token' | 'grant';

interface Entry {
  name: string;
  schema: string;
  tokens: Set<string>;
  grants: Set<string>;
  loaded: boolean;
  /** The first load, while it runs. */
  loading: Promise<void> | undefined;
  /** A poll's read of this tenant, while it runs (reads of one tenant never overlap). */
  reading: Promise<void> | undefined;
  /** One list per running read: ids applied meanwhile, merged into its result (it may predate their commit). */
  pending: Array<Array<[Kind, string]>>;
}

interface Sets {
  tokens: Set<string>;
  grants: Set<string>;
}

/** A tenant in a poll's batch read, with the list collecting ids applied while that read runs. */
interface BatchRead {
  entry: Entry;
  pending: Array<[Kind, string]>;
}

/** Tenants whose sets are kept; one dropped is read again on its next use. */
const MAX_TENANTS = 10_000;

export class RevocationCache {
  /**
   * By tenant. The ttl is the idle time: only a use (isRevoked) renews it; apply, refresh and the
   * poll only peek. Expiry is checked on get and by the poll (no timers).
   */
  private readonly entries: LRUCache<string, Entry>;
  private readonly pollIntervalMs: number;
  private readonly batchSize: number;
  private readonly onError: (e: unknown) => void;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;

  constructor(
    private readonly dbs: TenantDatabases,
    options: RevocationCacheOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 3000;
    // At least 1 ms: a ttl of 0 would mean "never idle" to LRUCache.
    this.entries = new LRUCache({ max: MAX_TENANTS, ttl: Math.max(1, options.idleMs ?? 60_000), updateAgeOnGet: true, ttlAutopurge: false });
    this.batchSize = Math.max(1, options.batchSize ?? 50);
    this.onError = options.onError ?? (() => {});
    if (this.pollIntervalMs > 0) {
      this.timer = setInterval(() => void this.poll(), this.pollIntervalMs);
      this.timer.unref();
    }
  }

  /** Whether the token `jti`, or its grant, is revoked (the tenant's sets are loaded on first use). */
  async isRevoked(tenant: RevocationTenant, jti: string, grantId?: string): Promise<boolean> {
    const entry = this.entryFor(tenant);
    if (!entry.loaded) await this.load(entry);
    return entry.tokens.has(jti) || (grantId !== undefined && entry.grants.has(grantId));
  }

  /** A revocation this process learned of (its own commit, or a notification): effective at once. */
  apply(tenant: string, kind: Kind, id: string): void {
    const entry = this.entries.peek(tenant);
    if (!entry) return; // not cached here: its first use reads the table
    (kind === 'grant' ? entry.grants : entry.tokens).add(id);
    for (const list of entry.pending) list.push([kind, id]);
  }

  /** Re-reads one tenant now (a notification without a key); nothing when it is not cached. */
  async refresh(tenant: string): Promise<void> {
    const entry = this.entries.peek(tenant);
    if (!entry?.loaded) return;
    await entry.reading?.catch(() => {});
    if (!entry.reading) await this.readBatch([entry]);
  }

  /** Drops a tenant's sets (the tenant changed or went away); its next use loads them again. */
  forget(tenant: string): void {
    this.entries.delete(tenant);
  }

  /** Notifications may have been missed: re-read every cached tenant now. */
  reset(): Promise<void> {
    return this.poll(true);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Tenants currently cached (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** The tenant's entry, made on first use; a use renews its idle time (updateAgeOnGet). */
  private entryFor(tenant: RevocationTenant): Entry {
    let entry = this.entries.get(tenant.name);
    if (!entry || entry.schema !== tenant.schema) {
      entry = {
        name: tenant.name,
        schema: tenant.schema,
        tokens: new Set(),
        grants: new Set(),
        loaded: false,
        loading: undefined,
        reading: undefined,
        pending: [],
      };
      this.entries.set(tenant.name, entry);
    }
    return entry;
  }

  private load(entry: Entry): Promise<void> {
    if (entry.loading) return entry.loading;
    const pending: Array<[Kind, string]> = [];
    entry.pending.push(pending);
    entry.loading = loadRevocations(this.dbs.of(entry), entry.schema)
      .then((sets) => {
        this.install(entry, sets, pending);
        entry.loaded = true;
      })
      .finally(() => {
        entry.loading = undefined;
        entry.pending = entry.pending.filter((p) => p !== pending);
      });
    return entry.loading;
  }

  private install(entry: Entry, sets: Sets, pending: ReadonlyArray<[Kind, string]>): void {
    for (const [kind, id] of pending) (kind === 'grant' ? sets.grants : sets.tokens).add(id);
    entry.tokens = sets.tokens;
    entry.grants = sets.grants;
  }

  /** One round of the poll: drops idle tenants, re-reads the others (a reset runs its own round, after one under way). */
  private poll(everything = false): Promise<void> {
    if (this.polling) return everything ? this.polling.then(() => this.poll(true)) : this.polling;
    // An idle tenant is already gone for every use (get treats it as absent): free it. values()
    // skips idle ones and, unlike get, does not count as a use.
    this.entries.purgeStale();
    const due: Entry[] = [];
    for (const entry of this.entries.values()) if (entry.loaded && !entry.loading && !entry.reading) due.push(entry);
    const batches: Entry[][] = [];
    for (let i = 0; i < due.length; i += this.batchSize) batches.push(due.slice(i, i + this.batchSize));
    this.polling = Promise.all(batches.map((b) => this.readBatch(b))).then(
      () => {
        this.polling = undefined;
      },
      () => {
        this.polling = undefined;
      },
    );
    return this.polling;
  }

  /** Current sets of several tenants in one query; a failing batch is retried tenant by tenant. */
  private readBatch(batch: Entry[]): Promise<void> {
    const reads = batch.map((entry): BatchRead => {
      const pending: Array<[Kind, string]> = [];
      entry.pending.push(pending);
      return { entry, pending };
    });
    const reading = this.readInto(reads).finally(() => {
      for (const { entry, pending } of reads) {
        entry.pending = entry.pending.filter((p) => p !== pending);
        if (entry.reading === reading) entry.reading = undefined;
      }
    });
    for (const entry of batch) entry.reading = reading;
    return reading;
  }

  private async readInto(reads: readonly BatchRead[]): Promise<void> {
    const batch = reads.map((r) => r.entry);
    try {
      let results: Map<string, Sets>;
      try {
        results = await this.read(batch);
      } catch (e) {
        if (batch.length === 1) throw e;
        results = new Map();
        for (const entry of batch) {
          try {
            for (const [name, sets] of await this.read([entry])) results.set(name, sets);
          } catch (inner) {
            this.onError(inner);
          }
        }
      }
      for (const { entry, pending } of reads) {
        const sets = results.get(entry.name);
        if (sets && this.entries.peek(entry.name) === entry) this.install(entry, sets, pending);
      }
    } catch (e) {
      this.onError(e);
    }
  }

  /** Current sets of `batch`: one query per database (cluster) its tenants live in. */
  private async read(batch: readonly Entry[]): Promise<Map<string, Sets>> {
    const byDatabase = new Map<Queryable, Entry[]>();
    for (const entry of batch) {
      const db = this.dbs.of(entry);
      const group = byDatabase.get(db);
      if (group) group.push(entry);
      else byDatabase.set(db, [entry]);
    }
    const results = new Map<string, Sets>(batch.map((e) => [e.name, { tokens: new Set<string>(), grants: new Set<string>() }]));
    await Promise.all(
      [...byDatabase].map(async ([db, entries]) => {
        const parts = entries.map(
          (e, i) =>
            `SELECT $${i + 1}::text AS "tenant", "kind", "id" FROM ${qualified(e.schema, REVOCATIONS_TABLE)}
         WHERE "expires_at" >= (clock_timestamp() at time zone 'utc')`,
        );
        const { rows } = await db.query<{ tenant: string; kind: string; id: string }>(
          parts.join('\nUNION ALL\n'),
          entries.map((e) => e.name),
        );
        for (const r of rows) {
          const sets = results.get(r.tenant);
          if (sets) (r.kind === 'grant' ? sets.grants : sets.tokens).add(r.id);
        }
      }),
    );
    return results;
  }
}
