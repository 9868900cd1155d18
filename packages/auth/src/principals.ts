import { qualified, type Queryable, type TenantDatabases } from '@quire/db';
import { makePrincipal, type Principal } from '@quire/permissions';
import { LRUCache } from 'lru-cache';
import { AUTH_TABLE } from './auth-table';
import { matchesDigest, storedDigest } from './secrets';
import { spreadTtl } from './cache-ttl';

export interface TenantRef {
  name: string;
  schema: string;
}

interface UserRow {
  name: string;
  enabled: number;
  user_type: string | null;
}

/** A user's roles from `Has Role`, plus the automatic ones (frappe.get_roles). */
export async function loadPrincipal(q: Queryable, schema: string, user: string): Promise<Principal | undefined> {
  const { rows } = await q.query<UserRow>(`SELECT "name", "enabled", "user_type" FROM ${qualified(schema, 'tabUser')} WHERE "name" = $1`, [user]);
  const row = rows[0];
  if (!row || !row.enabled) return undefined;
  return principalOf(q, schema, row);
}

async function principalOf(q: Queryable, schema: string, row: UserRow): Promise<Principal> {
  const roles = await q.query<{ role: string }>(`SELECT "role" FROM ${qualified(schema, 'tabHas Role')} WHERE "parent" = $1 AND "parenttype" = 'User'`, [
    row.name,
  ]);
  const names = roles.rows.map((r) => r.role);
  if (row.user_type === 'System User') names.push('Desk User');
  return makePrincipal(row.name, names);
}

interface KeyEntry {
  tenant: string;
  user: string;
  /** The stored secret hash, decoded once (secrets.ts storedDigest). */
  digest: Buffer;
  principal: Principal;
  /** A background re-read is under way (refreshAhead). */
  refreshing?: boolean;
}

/** A digest nothing hashes to, for unknown keys: the same work as a known one. */
const NO_KEY = storedDigest('');

export interface PrincipalCacheOptions {
  /** How long a verified key is trusted without asking the database again (0: not cached). */
  ttlMs?: number;
  /** Keys remembered (all tenants together); the least recently used goes first. */
  maxEntries?: number;
}

/**
 * API key -> Principal, cached briefly per process so that the hot path costs one SHA-256 and no
 * query. Entries are dropped when the user changes (roles, keys, disabled) through the
 * invalidation bus, and expire after `ttlMs` in any case; beyond `maxEntries` the least recently
 * used goes first. A key in use is read again in the background before its entry expires, so its
 * requests do not wait for the reload (the entry is never used past `ttlMs` either way).
 */
export class ApiKeyAuthenticator {
  /** Lookups answered from the cache and from the database (the `quire_cache_requests_total` metric). */
  readonly stats = { hits: 0, misses: 0 };
  /** By tenant and key; expiry is checked on get (no timers). */
  private readonly entries: LRUCache<string, KeyEntry>;
  /** Bumped by every invalidation, so a load that started before one is never cached after it. */
  private generation = 0;
  private readonly ttlMs: number;

  constructor(
    private readonly dbs: TenantDatabases,
    options: PrincipalCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    // ttl 0 would mean "never expires" to LRUCache: with ttlMs <= 0 nothing is stored instead.
    this.entries = new LRUCache({ max: options.maxEntries ?? 10_000, ttl: Math.max(0, this.ttlMs), ttlAutopurge: false });
  }

  /** The principal for a key and secret, or undefined when either is wrong (the caller answers 401). */
  async authenticate(tenant: TenantRef, apiKey: string, apiSecret: string): Promise<Principal | undefined> {
    const cacheKey = `${tenant.name}\0${apiKey}`;
    let entry = this.entries.get(cacheKey);
    if (entry) {
      this.stats.hits++;
      this.refreshAhead(cacheKey, entry, tenant, apiKey);
    } else {
      this.stats.misses++;
      const generation = this.generation;
      entry = await this.load(tenant, apiKey);
      if (!entry) {
        matchesDigest(apiSecret, NO_KEY); // same work for unknown keys
        return undefined;
      }
      if (generation === this.generation && this.ttlMs > 0) this.entries.set(cacheKey, entry, { ttl: spreadTtl(this.ttlMs) });
    }
    return matchesDigest(apiSecret, entry.digest) ? entry.principal : undefined;
  }

  /** An entry in the last fifth of its life is read again in the background (one re-read at a time). */
  private refreshAhead(cacheKey: string, entry: KeyEntry, tenant: TenantRef, apiKey: string): void {
    if (entry.refreshing || this.entries.getRemainingTTL(cacheKey) > this.ttlMs / 5) return;
    entry.refreshing = true;
    const generation = this.generation;
    this.load(tenant, apiKey).then(
      (fresh) => {
        // Invalidated or replaced meanwhile: what was read may be older than what is known now.
        if (generation !== this.generation || this.entries.peek(cacheKey) !== entry) return;
        if (fresh) this.entries.set(cacheKey, fresh, { ttl: spreadTtl(this.ttlMs) });
        else this.entries.delete(cacheKey);
      },
      // The entry expires as it would have; the request after that reads the key itself.
      () => {},
    );
  }

  private async load(tenant: TenantRef, apiKey: string): Promise<KeyEntry | undefined> {
    const db = this.dbs.of(tenant);
    const { rows } = await db.query<UserRow & { password: string }>(
      `SELECT u."name", u."enabled", u."user_type", a."password"
       FROM ${qualified(tenant.schema, 'tabUser')} u
       JOIN ${qualified(tenant.schema, AUTH_TABLE)} a ON a."doctype" = 'User' AND a."name" = u."name" AND a."fieldname" = 'api_secret'
       WHERE u."api_key" = $1`,
      [apiKey],
    );
    const row = rows[0];
    if (!row || !row.enabled) return undefined;
    const principal = await principalOf(db, tenant.schema, row);
    return { tenant: tenant.name, user: row.name, digest: storedDigest(row.password), principal };
  }

  /** Drops what is cached for one user of a tenant, or for the whole tenant. */
  invalidate(tenant: string, user?: string): void {
    this.generation++;
    // The key holds the API key, not the user: find them by value. Collected first, as deleting
    // while LRUCache iterates is not safe.
    const doomed: string[] = [];
    this.entries.forEach((e, k) => {
      if (e.tenant === tenant && (user === undefined || e.user === user)) doomed.push(k);
    });
    for (const k of doomed) this.entries.delete(k);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
