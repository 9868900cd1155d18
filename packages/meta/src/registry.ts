import { createHash } from 'node:crypto';
import { qualified, type Queryable } from '@quire/db';
import { LRUCache } from 'lru-cache';
import type { DocTypeDefinition } from './definition';
import { Meta, TenantMeta } from './meta';
import { parseDefinition } from './normalize';

export interface TenantRef {
  name: string;
  schema: string;
}

/** Reads every DocType definition of a tenant from its DocType, DocField and DocPerm tables. */
export async function loadDefinitions(q: Queryable, schema: string): Promise<DocTypeDefinition[]> {
  // One after another: `q` may be a transaction's single connection (pg deprecates overlapping queries on one client).
  const doctypes = await q.query<Record<string, unknown>>(`SELECT * FROM ${qualified(schema, 'tabDocType')}`);
  const fields = await q.query<Record<string, unknown>>(
    `SELECT * FROM ${qualified(schema, 'tabDocField')} WHERE "parenttype" = 'DocType' ORDER BY "parent", "idx"`,
  );
  const perms = await q.query<Record<string, unknown>>(
    `SELECT * FROM ${qualified(schema, 'tabDocPerm')} WHERE "parenttype" = 'DocType' ORDER BY "parent", "idx"`,
  );
  const group = (rows: Record<string, unknown>[]) => {
    const map = new Map<string, Record<string, unknown>[]>();
    for (const r of rows) {
      const parent = String(r.parent);
      let list = map.get(parent);
      if (!list) map.set(parent, (list = []));
      list.push(r);
    }
    return map;
  };
  const fieldsOf = group(fields.rows);
  const permsOf = group(perms.rows);
  return doctypes.rows.map((row) =>
    intern(
      parseDefinition({
        ...row,
        fields: fieldsOf.get(String(row.name)) ?? [],
        permissions: permsOf.get(String(row.name)) ?? [],
      }),
    ),
  );
}

/**
 * One object per distinct definition in the process: tenants provisioned from one release's
 * template hold identical standard DocTypes, so a thousand tenants share one parsed copy of each
 * (and one set of what Meta derives from it) instead of a thousand.
 */
const interned = new Map<string, WeakRef<DocTypeDefinition>>();
const forget = new FinalizationRegistry<string>((key) => {
  if (interned.get(key)?.deref() === undefined) interned.delete(key);
});

function intern(def: DocTypeDefinition): DocTypeDefinition {
  const key = createHash('sha1').update(JSON.stringify(def)).digest('base64');
  const existing = interned.get(key)?.deref();
  if (existing) return existing;
  interned.set(key, new WeakRef(def));
  forget.register(def, key);
  return def;
}

export function buildTenantMeta(schema: string, definitions: Iterable<DocTypeDefinition>): TenantMeta {
  return new TenantMeta(
    schema,
    [...definitions].map((d) => new Meta(d, schema)),
  );
}

interface Entry {
  generation: number;
  value?: TenantMeta;
  loading?: Promise<TenantMeta>;
}

export interface MetaCacheOptions {
  /** Tenants whose metadata is kept (default 10,000). */
  maxTenants?: number;
  /** Dropped after this long unused (default 30 minutes; 0 keeps it until evicted by count). */
  idleMs?: number;
}

/**
 * The per-process metadata cache: one TenantMeta per tenant, loaded on its first request and kept
 * until invalidated (LISTEN/NOTIFY, or the tenant directory's version check). A load that started
 * before an invalidation is never installed after it. Memory stays bounded however many tenants a
 * database holds: beyond `maxTenants` the least recently used tenant is dropped, and a tenant
 * unused for `idleMs` is dropped by `purgeIdle` — like an invalidation, that only means its next
 * request reads the tables again (a few ms).
 */
export class MetaRegistry {
  /** Lookups answered from the cache and from the database (the `quire_cache_requests_total` metric). */
  readonly stats = { hits: 0, misses: 0 };
  private readonly entries: LRUCache<string, Entry>;
  private generation = 0;

  constructor(
    private readonly db: Queryable,
    options: MetaCacheOptions = {},
  ) {
    const idleMs = options.idleMs ?? 30 * 60_000;
    this.entries = new LRUCache<string, Entry>({ max: options.maxTenants ?? 10_000, ...(idleMs > 0 ? { ttl: idleMs, updateAgeOnGet: true } : {}) });
  }

  /** Drops the metadata of tenants unused for longer than `idleMs` (called periodically). */
  purgeIdle(): void {
    this.entries.purgeStale();
  }

  /** Tenants whose metadata is held now. */
  get size(): number {
    return this.entries.size;
  }

  /** The cached metadata, without waiting; undefined when it must be loaded. */
  peek(tenant: TenantRef): TenantMeta | undefined {
    const value = this.entries.get(tenant.name)?.value;
    if (value) this.stats.hits++; // a miss is counted by the get() that follows
    return value;
  }

  get(tenant: TenantRef): Promise<TenantMeta> {
    const entry = this.entries.get(tenant.name);
    if (entry?.value) {
      this.stats.hits++;
      return Promise.resolve(entry.value);
    }
    this.stats.misses++;
    if (entry?.loading) return entry.loading;
    const generation = ++this.generation;
    const fresh: Entry = { generation };
    fresh.loading = loadDefinitions(this.db, tenant.schema).then(
      (defs) => {
        const meta = buildTenantMeta(tenant.schema, defs);
        // peek: whether it is still ours (not invalidated or evicted meanwhile) is no use of it
        if (this.entries.peek(tenant.name) === fresh) {
          fresh.value = meta;
          delete fresh.loading;
        }
        return meta;
      },
      (e: unknown) => {
        if (this.entries.peek(tenant.name) === fresh) this.entries.delete(tenant.name);
        throw e;
      },
    );
    this.entries.set(tenant.name, fresh);
    return fresh.loading;
  }

  invalidate(tenantName: string): void {
    this.entries.delete(tenantName);
  }

  invalidateAll(): void {
    this.entries.clear();
  }
}
