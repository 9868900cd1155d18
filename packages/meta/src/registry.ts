import { createHash } from 'node:crypto';
import { qualified, type Queryable, type TenantDatabases } from '@quire/db';
import { LRUCache } from 'lru-cache';
import type { DocTypeDefinition } from './definition';
import { Meta, TenantMeta } from './meta';
import { NO_OWNER_FIELDS, type OwnerFields } from './owner-fields';
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
  return doctypes.rows.map((row) => {
    const fieldRows = fieldsOf.get(String(row.name)) ?? [];
    const permRows = permsOf.get(String(row.name)) ?? [];
    // Rows alike but for their stamps parse alike: the stored form is looked up before parsing it.
    for (const r of [row, ...fieldRows, ...permRows]) for (const column of STAMP_COLUMNS) if (column in r) r[column] = null;
    const stored = { ...row, fields: fieldRows, permissions: permRows };
    const storedKey = digest(stored);
    const known = byStoredForm.get(storedKey);
    if (known) return known;
    return byStoredForm.set(storedKey, intern(parseDefinition(stored)));
  });
}

/** Columns every row has that say when and by whom it was written: not part of a definition (the schema drops them). */
const STAMP_COLUMNS = ['creation', 'modified', 'modified_by', 'owner'] as const;

function digest(value: unknown): string {
  return createHash('sha1').update(JSON.stringify(value)).digest('base64');
}

/**
 * One object per distinct definition in the process, held weakly by a key: tenants provisioned
 * from one release's template hold identical standard DocTypes, so a thousand tenants share one
 * parsed copy of each (and one set of what Meta derives from it) instead of a thousand.
 */
class WeakInterner<V extends object> {
  private readonly values = new Map<string, WeakRef<V>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (this.values.get(key)?.deref() === undefined) this.values.delete(key);
  });

  get(key: string): V | undefined {
    return this.values.get(key)?.deref();
  }

  /** Holds `value` under `key` (unless an equal one is held); returns the one held. */
  set(key: string, value: V): V {
    const existing = this.get(key);
    if (existing) return existing;
    this.values.set(key, new WeakRef(value));
    this.forget.register(value, key);
    return value;
  }
}

/** Parsed definitions by their own content. */
const interned = new WeakInterner<DocTypeDefinition>();
/** The same, by the rows they were read from (less stamps): a tenant's load then skips parsing what another's parsed. */
const byStoredForm = new WeakInterner<DocTypeDefinition>();

function intern(def: DocTypeDefinition): DocTypeDefinition {
  return interned.set(digest(def), def);
}

export function buildTenantMeta(schema: string, definitions: Iterable<DocTypeDefinition>, ownerFields: OwnerFields = NO_OWNER_FIELDS): TenantMeta {
  return new TenantMeta(
    schema,
    [...definitions].map((d) => new Meta(d, schema, ownerFields.get(d.name))),
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
    private readonly dbs: TenantDatabases,
    options: MetaCacheOptions = {},
    /** The loaded apps' owner fields, given to every tenant's Meta. */
    private readonly ownerFields: OwnerFields = NO_OWNER_FIELDS,
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
    fresh.loading = loadDefinitions(this.dbs.of(tenant), tenant.schema).then(
      (defs) => {
        const meta = buildTenantMeta(tenant.schema, defs, this.ownerFields);
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
