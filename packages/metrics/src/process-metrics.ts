import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { cachedReading } from './cached';
import { FastHistogram } from './request-histogram';
import type { RouteTable } from './routes';

/** A cache's lookups so far, kept by the cache itself as plain numbers (no metrics library there). */
export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
}

/** Provisioning's spare-schema claims so far (the tenancy's own counts). */
export interface SpareClaimStats {
  readonly taken: number;
  readonly missed: number;
}

/** The database pool now (the Database seam's `poolStats()`). */
export interface PoolState {
  total: number;
  idle: number;
  waiting: number;
}

export interface ProcessMetricsOptions {
  /** `quire_tenant_requests_total{tenant}`: one series per tenant, so off unless asked for (METRICS_TENANT_LABEL). */
  tenantLabel?: boolean;
}

type RequestLabels = 'method' | 'route' | 'status_code';

/** Seconds buckets for request durations: 5 ms to 5 s, where an API's answers fall. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Methods other than these are counted as `other`: the label stays bounded whatever clients send. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * One process's Prometheus registry, whatever services it runs: Node's default metrics under their
 * standard names, request durations by route template, the pool, caches and tenants. Services add
 * their own metrics to `registry`.
 */
/** What the metrics read of fair admission (the shape of @quire/limits' TenantGateStats; metrics does not depend on limits). */
export interface AdmissionStats {
  readonly waiting: number;
  readonly refused: Readonly<Record<string, number>>;
}

export class ProcessMetrics {
  readonly registry = new Registry();
  private readonly duration: FastHistogram<RequestLabels>;
  /** Requests being served: a plain count, read into the gauge at scrape time (no metric call per request). */
  private inFlightNow = 0;
  private readonly tenantRequests: Counter<'tenant'> | undefined;
  private readonly tenantUsage: { request: Counter<'tenant'>; database: Counter<'tenant'> } | undefined;
  private readonly ready: Gauge;

  constructor(options: ProcessMetricsOptions = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.duration = new FastHistogram(
      'http_request_duration_seconds',
      'HTTP requests by method, route template and status code, from the request to the end of the response',
      ['method', 'route', 'status_code'],
      DURATION_BUCKETS,
      registers,
    );
    const inFlight = (): number => this.inFlightNow;
    new Gauge({
      name: 'http_requests_in_flight',
      help: 'HTTP requests being served now',
      registers,
      collect() {
        this.set(inFlight());
      },
    });
    this.ready = new Gauge({ name: 'quire_ready', help: 'Whether the last readiness evaluation said ready (1) or not (0)', registers });
    if (options.tenantLabel) {
      this.tenantRequests = new Counter({ name: 'quire_tenant_requests_total', help: 'HTTP requests by tenant', labelNames: ['tenant'], registers });
      this.tenantUsage = {
        request: new Counter({
          name: 'quire_tenant_request_seconds_total',
          help: "Request time by tenant, from its turn to its answer (Frappe's rate-limit time)",
          labelNames: ['tenant'],
          registers,
        }),
        database: new Counter({
          name: 'quire_tenant_database_seconds_total',
          help: 'Time requests of a tenant spent on Postgres (statements and transactions)',
          labelNames: ['tenant'],
          registers,
        }),
      };
    }
  }

  /**
   * Where the usage meter reports each tenant's request and database time, as
   * `quire_tenant_request_seconds_total` and `quire_tenant_database_seconds_total` (one series per
   * tenant: only with METRICS_TENANT_LABEL); undefined without the label.
   */
  tenantUsageObserver(): { request(tenant: string, ms: number): void; database(tenant: string, ms: number): void } | undefined {
    const usage = this.tenantUsage;
    if (!usage) return undefined;
    return {
      request: (tenant, ms) => usage.request.inc({ tenant }, ms / 1000),
      database: (tenant, ms) => usage.database.inc({ tenant }, ms / 1000),
    };
  }

  /**
   * Times every request of a listener, labelled by `routes` (never by the URL itself). `tenantOf`
   * names the request's tenant once served (the per-tenant counter, when on).
   */
  observeRequests<Res extends ServerResponse>(
    routes: RouteTable,
    tenantOf?: (res: Res) => string | undefined,
  ): (req: IncomingMessage, res: Res, next: () => void) => void {
    return (req, res, next) => {
      const start = performance.now();
      // Read now: routers rewrite req.url to the part below their mount point.
      const url = req.url ?? '/';
      this.inFlightNow++;
      // 'close' comes once, after the response ended or the connection went away; `on` spares once()'s wrapper.
      res.on('close', () => {
        this.inFlightNow--;
        const method = req.method && METHODS.has(req.method) ? req.method : 'other';
        this.duration.observe([method, routes.label(url), res.statusCode], (performance.now() - start) / 1000);
        if (this.tenantRequests && tenantOf) {
          const tenant = tenantOf(res);
          if (tenant) this.tenantRequests.inc({ tenant });
        }
      });
      next();
    };
  }

  /** `quire_ready`, set from each readiness evaluation. */
  setReady(ready: boolean): void {
    this.ready.set(ready ? 1 : 0);
  }

  /**
   * `quire_db_pool_connections{cluster,state}` from each pool open now (`default`: the platform
   * database), and `quire_db_clusters_open`, read at scrape time. A cluster's pool closed when idle
   * has no series until it opens again.
   */
  watchPools(read: () => Iterable<readonly [string, PoolState | undefined]>): void {
    const registers = [this.registry];
    new Gauge({
      name: 'quire_db_pool_connections',
      help: 'Database pool connections by cluster (default: the platform database): idle, busy (lent out), waiting (callers queued for one); none for a cluster whose pool is closed',
      labelNames: ['cluster', 'state'],
      registers,
      collect() {
        this.reset();
        for (const [cluster, pool] of read()) {
          if (!pool) continue;
          this.set({ cluster, state: 'idle' }, pool.idle);
          this.set({ cluster, state: 'busy' }, Math.max(0, pool.total - pool.idle));
          this.set({ cluster, state: 'waiting' }, pool.waiting);
        }
      },
    });
    new Gauge({
      name: 'quire_db_clusters_open',
      help: 'Database clusters this process has a pool open to, the platform database (default) included',
      registers,
      collect() {
        this.set([...read()].length);
      },
    });
  }

  /**
   * `quire_db_cluster_up{cluster}`: 1 when the cluster answered its last probe, 0 when not, for
   * each cluster whose pool is open (`up` says which: read at scrape time, bounded by the caller).
   */
  watchClusters(up: () => Promise<ReadonlyMap<string, boolean>>): void {
    new Gauge({
      name: 'quire_db_cluster_up',
      help: 'Whether a database cluster this process has a pool open to answered (1) or not (0); none for a cluster whose pool is closed',
      labelNames: ['cluster'],
      registers: [this.registry],
      async collect() {
        const clusters = await up();
        this.reset();
        for (const [cluster, answered] of clusters) this.set({ cluster }, answered ? 1 : 0);
      },
    });
  }

  /** `quire_cache_requests_total{cache,result}` from the caches' own counts, read at scrape time. */
  watchCaches(caches: Record<string, () => CacheStats>): void {
    new Counter({
      name: 'quire_cache_requests_total',
      help: 'Cache lookups by cache and result (hit, miss)',
      labelNames: ['cache', 'result'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [cache, read] of Object.entries(caches)) {
          const stats = read();
          this.inc({ cache, result: 'hit' }, stats.hits);
          this.inc({ cache, result: 'miss' }, stats.misses);
        }
      },
    });
  }

  /**
   * `quire_tenant_spares_ready`: spare tenant schemas of this release ready in the database (read at
   * most every 15 s, whichever replicas are scraped), and `quire_tenant_spare_claims_total{result}`:
   * tenants this process provisioned from a spare (`taken`) or, none being ready, from the template
   * (`missed`: slower; more than a few say TENANT_SPARES is too low for the sign-up rate).
   */
  watchSpares(ready: () => Promise<number>, claims: () => SpareClaimStats): void {
    const readyNow = cachedReading(ready);
    new Gauge({
      name: 'quire_tenant_spares_ready',
      help: 'Spare tenant schemas of this release ready for new tenants (database-wide)',
      registers: [this.registry],
      async collect() {
        this.set(await readyNow());
      },
    });
    new Counter({
      name: 'quire_tenant_spare_claims_total',
      help: 'Tenants provisioned by this process from a spare schema (taken) or from the template because none was ready (missed)',
      labelNames: ['result'],
      registers: [this.registry],
      collect() {
        this.reset();
        const stats = claims();
        this.inc({ result: 'taken' }, stats.taken);
        this.inc({ result: 'missed' }, stats.missed);
      },
    });
  }

  /**
   * Fair admission (the API's TenantGate): `quire_tenant_throttled_total{reason}`, requests answered
   * 429 instead of waiting (`queue_full`, `queue_timeout`; later limits add their own reasons), and
   * `quire_requests_waiting`, requests waiting for their tenant's turn now.
   */
  watchAdmission(read: () => AdmissionStats): void {
    new Counter({
      name: 'quire_tenant_throttled_total',
      help: 'Requests refused (429) to keep tenants from taking the process from each other, by reason',
      labelNames: ['reason'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [reason, n] of Object.entries(read().refused)) this.inc({ reason }, n);
      },
    });
    new Gauge({
      name: 'quire_requests_waiting',
      help: "Requests waiting for their tenant's turn in this process",
      registers: [this.registry],
      collect() {
        this.set(read().waiting);
      },
    });
  }

  /** `quire_tenants`: tenants this process knows. */
  watchTenants(count: () => number): void {
    new Gauge({
      name: 'quire_tenants',
      help: 'Tenants known to this process',
      registers: [this.registry],
      collect() {
        this.set(count());
      },
    });
  }
}
