import { JobOutbox } from '@quire/jobs';
import type { LoadedApps } from '@quire/apps';
import { ApiKeyAuthenticator, SessionAuthenticator, type SecretBox } from '@quire/auth';
import type { PlanCatalog } from '@quire/config';
import { runMigrations, subscribeInvalidations, type Database, type Executor, type InvalidationMessage, type Unlisten } from '@quire/db';
import type { DocContext, FileStore } from '@quire/documents';
import { PostgresRateCounter, type RateCounter } from '@quire/limits';
import { MetaRegistry, type MetaCacheOptions } from '@quire/meta';
import { OAuthRuntime, type OAuthRuntimeOptions } from '@quire/oauth';
import type { Principal } from '@quire/permissions';
import { PlatformChanges } from './changes';
import { normalizeHost, TenantDirectory, type Tenant } from './directory';
import { PLATFORM_SCHEMA, platformMigrations } from './platform-schema';
import { TenantSpares, type SpareOptions } from './spares';
import { TenantTemplates } from './template';
import { purgeDroppedFiles } from './file-purge';
import { TenantDatabase } from './tenant-db';
import { TenantPlans, type TenantLimits } from './plans';
import { PlanQuota } from './quota';
import { UsageMeter, UsageSampler } from './usage';
import { Clusters, DEFAULT_CLUSTER, type OpenCluster } from './clusters';

/** Dropped tenants' files are looked for every this many periodic resyncs (a minute at the default 5 s), besides at each drop. */
const PURGE_EVERY_RESYNCS = 12;

export interface PlatformOptions {
  db: Database;
  apps: LoadedApps;
  /** Where uploaded files' bytes live. */
  files: FileStore;
  /** Encrypts Password fields' values. */
  secrets: SecretBox;
  baseDomain: string;
  defaultTenant?: string | undefined;
  /** How often the registry is re-read in case a notification was missed. */
  refreshIntervalMs?: number;
  apiKeyTtlMs?: number;
  /** How many tenants' metadata this process keeps, and for how long unused. */
  metaCache?: MetaCacheOptions;
  /** Seconds a login session lasts without activity. */
  sessionExpirySeconds?: number;
  /** OAuth access-token verification: revocation poll, JWKS cache, token principals. */
  oauth?: OAuthRuntimeOptions;
  /** Tenant schemas kept ready ahead of provisioning (spares.ts); none by default. */
  spares?: SpareOptions;
  /** How people reach tenants from outside: the scheme, and a port when not the scheme's own (siteUrl). */
  publicUrl?: PublicUrl;
  /**
   * This process holds the file store (an API process, with the files volume; or the only process
   * of the embedded database): it removes dropped tenants' files (file-purge.ts).
   */
  holdsFiles?: boolean;
  /** The operator's plans (QUIRE_PLANS): bundles of per-tenant limits. */
  plans?: PlanCatalog;
  /** DATABASE_URL: the `default` cluster's URL. */
  platformUrl?: string | undefined;
  /** DATABASE_DIRECT_URL: the `default` cluster's URL for replication when DATABASE_URL is a pooler. */
  platformDirectUrl?: string | undefined;
  /** Opens a pool to another cluster (clusters.ts); without it only `default` is reachable. */
  openCluster?: OpenCluster | undefined;
  /** A cluster none of whose tenants was asked for this long has its pool and listener closed. */
  clusterIdleMs?: number;
}

/** Usage metering's rhythm (usage.ts). */
export interface MeteringOptions {
  /** How often this process adds its tenants' request counts and times to the platform's table. */
  flushMs: number;
  /** How often each tenant's database size, file storage and users are measured. */
  measureMs: number;
}

export interface PublicUrl {
  scheme: 'http' | 'https';
  port?: number | undefined;
}

/**
 * One process's view of the platform: the database, the loaded apps, and the caches every
 * request reads (tenants, metadata, API keys), kept current across processes through
 * LISTEN/NOTIFY with a periodic version check as the fallback.
 */
export class Platform {
  readonly db: Database;
  readonly apps: LoadedApps;
  readonly tenants: TenantDirectory;
  readonly metas: MetaRegistry;
  readonly apiKeys: ApiKeyAuthenticator;
  readonly sessions: SessionAuthenticator;
  readonly changes: PlatformChanges;
  /** OAuth access tokens: the verifier, the revocation sets, the token users' principals. */
  readonly oauth: OAuthRuntime;
  readonly files: FileStore;
  readonly secrets: SecretBox;
  /** The release's tenant template (provisioning copies it). */
  readonly templates: TenantTemplates;
  /** Schemas copied from the template ahead of time, which new tenants take. */
  readonly spares: TenantSpares;
  /** Hits counted against rate limits, shared by every process. */
  readonly rateCounter: RateCounter;
  private unlisten: Unlisten | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly issuerHostsCache = new WeakMap<Tenant, readonly string[]>();
  private purging: Promise<void> | undefined;
  private purgesAsked = 0;
  /** The operator's plans, applied to tenants. */
  readonly plans: TenantPlans;
  /** This process's request counts and times per tenant (counted once metering is started). */
  readonly usage: UsageMeter;
  private sampler: UsageSampler | undefined;
  private metering = false;
  private readonly perTenant = new WeakMap<Tenant, { base: Database; db: Executor; quota: PlanQuota | undefined }>();
  private resyncs = 0;
  /** The Postgres clusters tenants' schemas are on, and this process's pool to each in use. */
  readonly clusters: Clusters;
  private readonly clusterListeners = new Map<string, Promise<Unlisten | undefined>>();
  private readonly clusterTemplates = new Map<string, TenantTemplates>();
  /** Where every tenant's background jobs are enqueued (each on its own cluster's `quire.jobs`). */
  readonly jobs: JobOutbox;

  private constructor(private readonly options: PlatformOptions) {
    this.db = options.db;
    this.apps = options.apps;
    this.files = options.files;
    this.secrets = options.secrets;
    this.jobs = new JobOutbox(options.apps);
    this.clusters = new Clusters({
      platformDb: options.db,
      secrets: options.secrets,
      platformUrl: options.platformUrl,
      platformDirectUrl: options.platformDirectUrl,
      open: options.openCluster,
      ...(options.clusterIdleMs === undefined ? {} : { idleMs: options.clusterIdleMs }),
      onOpen: (name, db) => this.listenOn(name, db),
      onClose: (name) => this.stopListening(name),
    });
    this.tenants = new TenantDirectory(options.db, {
      baseDomain: options.baseDomain,
      defaultTenant: options.defaultTenant,
      clustersSeen: (names) => this.clusters.ensureKnown(names),
    });
    this.clusters.locate((name) => this.tenants.get(name)?.cluster);
    this.metas = new MetaRegistry(this.clusters, options.metaCache, options.apps.ownerFields);
    this.apiKeys = new ApiKeyAuthenticator(this.clusters, options.apiKeyTtlMs === undefined ? {} : { ttlMs: options.apiKeyTtlMs });
    this.sessions = new SessionAuthenticator(this.clusters, { expirySeconds: this.sessionExpirySeconds });
    this.oauth = new OAuthRuntime(this.clusters, options.oauth);
    this.changes = new PlatformChanges(options.db, this.metas, this.apiKeys, this.sessions, this.oauth);
    this.templates = new TenantTemplates(options.db, options.apps);
    this.clusterTemplates.set(DEFAULT_CLUSTER, this.templates);
    this.spares = new TenantSpares(options.db, this.templates, options.spares ?? { count: 0 });
    this.rateCounter = new PostgresRateCounter(options.db);
    this.plans = new TenantPlans(options.plans);
    this.usage = new UsageMeter(options.db);
  }

  /**
   * Meters the tenants this process serves (an API process): their requests' counts and times,
   * added to the platform's table every `flushMs`, and, shared with the other metering processes,
   * what each tenant keeps, measured every `measureMs`.
   */
  startMetering(options: MeteringOptions, onError: (err: unknown) => void = () => {}): void {
    if (this.metering) return;
    this.metering = true;
    this.usage.start(options.flushMs);
    this.sampler = new UsageSampler(this.db, this.clusters, options.measureMs, onError);
    this.sampler.start();
    void this.sampler.runOnce();
  }

  /** The database holding the tenant's schema (its cluster's). */
  dbOf(tenant: { readonly name: string }): Database {
    return this.clusters.of(tenant);
  }

  /** The release template tenants on `cluster` are copied from (each cluster keeps its own). */
  templatesOn(cluster: string): TenantTemplates {
    let templates = this.clusterTemplates.get(cluster);
    if (!templates) this.clusterTemplates.set(cluster, (templates = new TenantTemplates(this.clusters.database(cluster), this.apps)));
    return templates;
  }

  /**
   * Listens for invalidations on a cluster whose pool just opened: its tenants' transactions
   * notify there. What this process cached of them before the listener was up is dropped once it is.
   * A cluster that cannot be reached then is listened to again (1 s, 2 s, … 30 s apart) for as long
   * as its pool stays open: until then, its tenants' caches only follow the periodic resync.
   */
  private listenOn(name: string, db: Database, attempt = 0): void {
    const listening: Promise<Unlisten | undefined> = subscribeInvalidations(db, {
      onMessage: (m) => this.onInvalidation(m),
      onReset: () => this.forgetCluster(name),
    }).then(
      (unlisten) => {
        this.forgetCluster(name);
        return unlisten;
      },
      () => {
        const again = setTimeout(
          () => {
            if (this.clusterListeners.get(name) === listening) this.listenOn(name, db, attempt + 1);
          },
          Math.min(30_000, 1000 * 2 ** attempt),
        );
        again.unref();
        return undefined;
      },
    );
    this.clusterListeners.set(name, listening);
  }

  private stopListening(name: string): void {
    const listening = this.clusterListeners.get(name);
    this.clusterListeners.delete(name);
    this.clusterTemplates.delete(name);
    // Nothing is heard from it any more: nothing cached of its tenants may be kept.
    this.forgetCluster(name);
    void listening?.then((unlisten) => unlisten?.()).catch(() => {});
  }

  /** Drops what is cached for every tenant on `cluster`. */
  private forgetCluster(cluster: string): void {
    for (const t of this.tenants.list()) if (t.cluster === cluster) this.forget(t.name);
  }

  /** What one tenant's plan allows. */
  limitsOf(tenant: Tenant): TenantLimits {
    return this.plans.of(tenant);
  }

  /** Applies the platform schema's migrations (idempotent). */
  static migratePlatform(db: Database): Promise<string[]> {
    return runMigrations(db, PLATFORM_SCHEMA, platformMigrations, { lock: db.supportsAdvisoryLocks });
  }

  static async open(options: PlatformOptions): Promise<Platform> {
    const platform = new Platform(options);
    // Listen first, then read: a tenant made between the two is either in the read or announced after it.
    platform.unlisten = await subscribeInvalidations(options.db, {
      onMessage: (m) => platform.onInvalidation(m),
      onReset: () => platform.resync(),
    });
    try {
      await platform.clusters.refresh();
      await platform.tenants.refresh();
    } catch (e) {
      await platform.unlisten();
      throw e;
    }
    // Files of tenants dropped while no process holding them ran.
    void platform.purgeDroppedFiles();
    const every = options.refreshIntervalMs ?? 5000;
    if (every > 0) {
      platform.timer = setInterval(() => platform.resync(false), every);
      platform.timer.unref();
    }
    return platform;
  }

  private onInvalidation(m: InvalidationMessage): void {
    switch (m.topic) {
      case 'meta':
        this.metas.invalidate(m.tenant);
        break;
      case 'user':
        this.apiKeys.invalidate(m.tenant, m.key);
        this.sessions.invalidate(m.tenant, m.key === undefined ? undefined : { user: m.key });
        this.oauth.invalidateUser(m.tenant, m.key);
        break;
      case 'oauth':
        this.oauth.onMessage(m.tenant, m.key);
        break;
      case 'session':
        this.sessions.invalidate(m.tenant, m.key === undefined ? undefined : { sidHash: m.key });
        break;
      case 'cluster':
        void this.clusters.refresh().catch(() => {});
        break;
      case 'tenant':
        this.forget(m.tenant);
        void this.tenants.refreshOne(m.tenant).then(
          // A dropped tenant's files go at once from the processes that hold them.
          () => (this.tenants.get(m.tenant) ? undefined : this.purgeDroppedFiles()),
          () => {},
        );
        break;
    }
  }

  /**
   * Removes the files of dropped tenants when this process holds the file store (else: nothing, the
   * API processes do it). Never throws: what fails is tried again at the next drop or resync.
   */
  async purgeDroppedFiles(): Promise<void> {
    if (!this.options.holdsFiles) return;
    // One purge at a time; a drop recorded while one runs is picked up by one more pass after it.
    this.purgesAsked++;
    this.purging ??= (async () => {
      for (let done = 0; done < this.purgesAsked;) {
        done = this.purgesAsked;
        await purgeDroppedFiles(this.db, this.files).catch(() => 0);
      }
    })().finally(() => (this.purging = undefined));
    await this.purging;
  }

  /** Re-reads the registry; drops metadata whose version moved or that went unused (or everything, after a lost connection). */
  private resync(everything = true): void {
    this.metas.purgeIdle();
    void this.clusters.closeIdle();
    if (!everything && ++this.resyncs % PURGE_EVERY_RESYNCS === 0) void this.purgeDroppedFiles();
    if (everything) {
      this.metas.invalidateAll();
      this.apiKeys.clear();
      this.sessions.clear();
      this.oauth.reset();
    }
    this.clusters
      .refresh()
      .then(() => this.tenants.refresh())
      .then(
        (changed) => changed.forEach((t) => this.metas.invalidate(t)),
        () => {},
      );
  }

  /** Drops everything cached for a tenant. */
  forget(tenant: string): void {
    this.metas.invalidate(tenant);
    this.apiKeys.invalidate(tenant);
    this.sessions.invalidate(tenant);
    this.oauth.forget(tenant);
  }

  /**
   * The hosts a tenant's access tokens may be issued at (`iss` host, any scheme and port): its
   * `<name>.<BASE_DOMAIN>` and custom domains, and — for DEFAULT_TENANT, which is reached on any
   * address — the host the request came to (`requestHost`).
   */
  issuerHosts(tenant: Tenant, requestHost?: string): readonly string[] {
    let hosts = this.issuerHostsCache.get(tenant);
    if (!hosts) this.issuerHostsCache.set(tenant, (hosts = this.tenants.hostsOf(tenant).map((h) => h.toLowerCase())));
    if (tenant.name !== this.options.defaultTenant) return hosts;
    const own = normalizeHost(requestHost);
    return own === undefined || hosts.includes(own) ? hosts : [...hosts, own];
  }

  /**
   * The tenant's own URL (Frappe's get_url()), for links that leave the request (a password reset
   * email): its `host_name` setting, else its primary host with the public scheme and port. Built
   * from what the platform knows of the tenant, never from a request's Host or X-Forwarded-*.
   */
  siteUrl(tenant: Tenant): string {
    const configured = tenant.config.host_name;
    if (configured) return configured.replace(/\/+$/, '');
    const { scheme, port } = this.options.publicUrl ?? { scheme: 'http' };
    const defaultPort = scheme === 'https' ? 443 : 80;
    const host = this.tenants.hostsOf(tenant)[0] ?? tenant.name;
    return `${scheme}://${host}${port === undefined || port === defaultPort ? '' : `:${port}`}`;
  }

  /** The context document operations of one request run with. */
  async context(tenant: Tenant, principal: Principal): Promise<DocContext> {
    const meta = this.metas.peek(tenant) ?? (await this.metas.get(tenant));
    const own = this.ownOf(tenant);
    return {
      db: own.db,
      tenant,
      meta,
      principal,
      controllers: this.apps.controllers,
      changes: this.changes,
      files: this.files,
      secrets: this.secrets,
      quota: own.quota,
      jobs: this.jobs,
    };
  }

  /** The tenant's database (metered, its plan's statement timeout) and its plan's quota, made once per version of the tenant the directory holds. */
  private ownOf(tenant: Tenant): { db: Executor; quota: PlanQuota | undefined } {
    // Its cluster's pool as open now (one closed while idle is opened again).
    const base = this.dbOf(tenant);
    let own = this.perTenant.get(tenant);
    if (!own || own.base !== base) {
      const limits = this.plans.of(tenant);
      const metered = this.metering ? this.usage : undefined;
      const db = metered || limits.statementTimeoutMs !== undefined ? new TenantDatabase(base, tenant.name, metered, limits.statementTimeoutMs) : base;
      this.perTenant.set(tenant, (own = { base, db, quota: PlanQuota.of(tenant, limits) }));
    }
    return own;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sampler?.close();
    await this.usage.close();
    this.oauth.close();
    await this.spares.idle();
    await this.purging;
    await this.clusters.close();
    await this.unlisten?.();
  }

  get baseDomain(): string {
    return this.options.baseDomain;
  }

  /** Frappe's default session_expiry is 170 hours. */
  get sessionExpirySeconds(): number {
    return this.options.sessionExpirySeconds ?? 170 * 3600;
  }
}
