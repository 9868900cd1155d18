import type { Queryable } from '@quire/db';
import type { SiteRateLimit } from '@quire/limits';

/**
 * `active`; `suspended`: every request answered 503 (SessionStopped); `read_only`: reads served,
 * writes answered 503 (InReadOnlyMode).
 */
export type TenantStatus = 'active' | 'suspended' | 'read_only';

export interface Tenant {
  readonly name: string;
  readonly schema: string;
  readonly status: TenantStatus;
  /** The Postgres cluster its schema is on (clusters.ts); `default` is the platform's own database. */
  readonly cluster: string;
  /** While a move's switch runs (move.ts): the cluster it goes to; its writes are held meanwhile. */
  readonly movingTo: string | null;
  /** Custom domains registered for the tenant (besides `<name>.<BASE_DOMAIN>`). */
  readonly domains: readonly string[];
  readonly metaVersion: number;
  readonly config: TenantConfig;
  /** Its database's size when last measured (usage.ts), for its plan's limit; undefined before. */
  readonly databaseBytes: number | undefined;
}

/** Per-tenant settings (Frappe's site_config keys we honour). */
export interface TenantConfig {
  /** Origins allowed to call with credentials: `*`, one origin, or a list (Frappe's allow_cors). */
  allow_cors?: string | string[];
  /**
   * The tenant's public URL (`https://erp.acme.com`), where links sent outside a request point
   * (Frappe's site_config `host_name`); without it, its primary host (Platform.siteUrl).
   */
  host_name?: string;
  /** Frappe's site rate limit: `limit` seconds of request time per `window` seconds (429 beyond); over its plan's. */
  rate_limit?: SiteRateLimit;
  /** Its plan (QUIRE_PLANS); without one, the default plan. */
  plan?: string;
}

export interface DirectoryOptions {
  baseDomain: string;
  defaultTenant?: string | undefined;
  /** Called with the clusters of tenants just read, before they are served (a cluster added since is read first). */
  clustersSeen?: (clusters: Set<string>) => Promise<void>;
}

interface TenantRow {
  name: string;
  schema: string;
  status: TenantStatus;
  cluster: string;
  moving_to: string | null;
  meta_version: number | string;
  domains: string[] | null;
  config: TenantConfig | string | null;
  database_bytes: number | string | null;
}

const SELECT_TENANTS = `SELECT t."name", t."schema", t."status", t."cluster", t."moving_to", t."meta_version", t."config",
         (SELECT u."database_bytes" FROM quire.tenant_usage u WHERE u."tenant" = t."name") AS database_bytes,
         array_remove(array_agg(d."domain" ORDER BY d."domain"), NULL) AS domains
  FROM quire.tenants t LEFT JOIN quire.tenant_domains d ON d."tenant" = t."name"`;

function fromRow(r: TenantRow): Tenant {
  const config = (typeof r.config === 'string' ? JSON.parse(r.config) : (r.config ?? {})) as TenantConfig;
  const databaseBytes = r.database_bytes === null ? undefined : Number(r.database_bytes);
  return {
    name: r.name,
    schema: r.schema,
    status: r.status,
    cluster: r.cluster,
    movingTo: r.moving_to,
    domains: r.domains ?? [],
    metaVersion: Number(r.meta_version),
    config,
    databaseBytes,
  };
}

/**
 * The tenant registry as this process knows it, for resolving a request's site without a query:
 * `X-Frappe-Site-Name` or Host (port stripped) -> tenant name, `<name>.<BASE_DOMAIN>`, a custom
 * domain, else DEFAULT_TENANT.
 */
export class TenantDirectory {
  private byName = new Map<string, Tenant>();
  private byDomain = new Map<string, Tenant>();
  private readonly suffix: string;
  /** Reads started so far (whole or one tenant), to order their results: an older read never overwrites a newer one. */
  private reads = 0;
  private applied = 0;
  /** When each tenant re-read on its own last began (kept until a whole read that began later lands). */
  private readonly readOne = new Map<string, number>();
  /** Callers waiting for a tenant's next version (changed). */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** The names of tenants not active, made again after a read changed the directory. */
  private pausedNames: readonly string[] | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly options: DirectoryOptions,
  ) {
    this.suffix = `.${options.baseDomain.toLowerCase()}`;
  }

  /** Reloads the registry; returns the tenants whose metadata version changed or that disappeared. */
  async refresh(): Promise<string[]> {
    const started = ++this.reads;
    const { rows } = await this.db.query<TenantRow>(`${SELECT_TENANTS} GROUP BY t."name"`);
    await this.options.clustersSeen?.(new Set(rows.map((r) => r.cluster)));
    // A newer whole read already landed: this one's snapshot is older than what we hold.
    if (started < this.applied) return [];
    this.applied = started;
    const byName = new Map<string, Tenant>();
    for (const r of rows) {
      const tenant = fromRow(r);
      byName.set(tenant.name, tenant);
    }
    // A tenant re-read on its own since this read began is fresher than the snapshot: keep it as it is.
    for (const [name, at] of this.readOne) {
      if (at <= started) {
        this.readOne.delete(name);
        continue;
      }
      const current = this.byName.get(name);
      if (current) byName.set(name, current);
      else byName.delete(name);
    }
    const byDomain = new Map<string, Tenant>();
    for (const tenant of byName.values()) for (const d of tenant.domains) byDomain.set(d, tenant);
    const changed: string[] = [];
    for (const [name, before] of this.byName) {
      const after = byName.get(name);
      if (!after || after.metaVersion !== before.metaVersion || after.schema !== before.schema || after.cluster !== before.cluster) changed.push(name);
    }
    this.byName = byName;
    this.byDomain = byDomain;
    this.pausedNames = undefined;
    for (const name of [...this.waiting.keys()]) this.wake(name);
    return changed;
  }

  /** Reloads one tenant (made, changed or dropped): with thousands of tenants, not all of them. */
  async refreshOne(name: string): Promise<void> {
    this.readOne.set(name, ++this.reads);
    const { rows } = await this.db.query<TenantRow>(`${SELECT_TENANTS} WHERE t."name" = $1 GROUP BY t."name"`, [name]);
    if (rows[0]) await this.options.clustersSeen?.(new Set([rows[0].cluster]));
    const before = this.byName.get(name);
    if (before) {
      for (const d of before.domains) if (this.byDomain.get(d) === before) this.byDomain.delete(d);
      this.byName.delete(name);
    }
    const row = rows[0];
    if (row) {
      const tenant = fromRow(row);
      this.byName.set(name, tenant);
      for (const d of tenant.domains) this.byDomain.set(d, tenant);
    }
    this.pausedNames = undefined;
    this.wake(name);
  }

  /**
   * Resolves when the tenant is next read (its notification, or the periodic re-read), or after
   * `ms`: a move's switch holds the tenant's writes until the directory names its new cluster.
   */
  changed(name: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      let list = this.waiting.get(name);
      if (!list) this.waiting.set(name, (list = []));
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private wake(name: string): void {
    const list = this.waiting.get(name);
    if (!list) return;
    this.waiting.delete(name);
    for (const fn of list) fn();
  }

  get(name: string): Tenant | undefined {
    return this.byName.get(name);
  }

  /**
   * Tenants suspended or read-only: their background jobs, scheduled events and webhook deliveries
   * wait until they are active again (each writes into the tenant, which neither may). Kept between
   * reads: the job feeders and the webhook claims ask on every pick.
   */
  paused(): readonly string[] {
    this.pausedNames ??= [...this.byName.values()].filter((t) => t.status !== 'active').map((t) => t.name);
    return this.pausedNames;
  }

  list(): Tenant[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * The tenant a site name or Host header designates, else DEFAULT_TENANT, else undefined. A value
   * that is not a host name (with an optional port) designates nothing, not even the default: a
   * Host like `acme.example:80@evil.example` must never reach a tenant.
   */
  resolve(siteOrHost: string | undefined): Tenant | undefined {
    if (siteOrHost !== undefined && siteOrHost !== '' && !isHostHeader(siteOrHost)) return undefined;
    const host = normalizeHost(siteOrHost);
    if (host) {
      const direct = this.byName.get(host) ?? this.byDomain.get(host);
      if (direct) return direct;
      if (host.endsWith(this.suffix)) {
        const sub = this.byName.get(host.slice(0, -this.suffix.length));
        if (sub) return sub;
      }
    }
    return this.options.defaultTenant ? this.byName.get(this.options.defaultTenant) : undefined;
  }

  /** The tenant's hosts, its primary one (`<name>.<BASE_DOMAIN>`) first. */
  hostsOf(tenant: Pick<Tenant, 'name' | 'domains'>): string[] {
    return [`${tenant.name}${this.suffix}`, ...tenant.domains];
  }
}

/**
 * Whether a Host header (or site name) is a host name or IP literal with an optional port, as RFC
 * 9110 has it, and nothing else: no userinfo (`@`), path, spaces or other characters a link built
 * from it could be bent by.
 */
export function isHostHeader(value: string): boolean {
  const m = HOST_HEADER.exec(value);
  return m !== null && (m[1] === undefined || Number(m[1]) <= 65535);
}

const HOST_HEADER = /^(?:[a-z0-9_](?:[a-z0-9_.-]{0,252})|\[[0-9a-f:.]{2,45}\])(?::(\d{1,5}))?$/i;

/** Lower-cased host without port (IPv6 literals keep their brackets). */
export function normalizeHost(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let host = value.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(0, end + 1);
  }
  const colon = host.indexOf(':');
  if (colon !== -1) host = host.slice(0, colon);
  return host.endsWith('.') ? host.slice(0, -1) : host;
}
