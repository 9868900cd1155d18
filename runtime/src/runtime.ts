import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningServer } from '@quire/api';
import { loadApps, type AppSource, type LoadedApps } from '@quire/apps';
import type { AuthMount, AuthService } from '@quire/auth-service';
import { createDatabaseIfMissing, openDatabase, PgDatabase, type Database } from '@quire/db';
import { LocalDiskStore } from '@quire/files';
import { frappeApp } from '@quire/frappe';
import { listen, operationsListener, Readiness, type Listening, type ServiceOperations } from '@quire/http';
import { ProcessMetrics } from '@quire/metrics';
import {
  loadDeploymentId,
  loadSecretBox,
  migrateRelease,
  Platform,
  platformSchemaReady,
  releaseOf,
  TenantMigrationError,
  type ClusterConnection,
} from '@quire/tenancy';
import { QueueProducer } from '@quire/webhooks';
import type { OperatorService } from '@quire/operator-service';
import type { WebhooksService } from '@quire/webhooks-service';
import type { WorkerService } from '@quire/worker-service';
import { JobsWakeProducer } from '@quire/jobs';
import pino, { type Logger } from 'pino';
import type { RuntimeConfig } from './config';
import { ClusterHealth } from './cluster-health';
import { addReadinessChecks } from './readiness-checks';

/** The services one process can run. */
export const SERVICES = ['api', 'webhooks', 'auth', 'operator', 'worker'] as const;
export type ServiceName = (typeof SERVICES)[number];
/** What `quire serve` with none named runs: everything but the Tenant operator, which needs a Kubernetes API server. */
export const ALL_IN_ONE = ['api', 'webhooks', 'auth', 'worker'] as const satisfies readonly ServiceName[];

/** The operations port when METRICS_PORT is unset (the OpenTelemetry Prometheus exporter's). */
const DEFAULT_METRICS_PORT = 9464;

export interface RuntimeOptions {
  config: RuntimeConfig;
  /** Services to start; none for a command that only reads and writes documents. */
  serve?: readonly ServiceName[];
  /**
   * `platform` (default): migrate the platform schema first (CLI commands, tests). `release`: then
   * bring every tenant to this build's release too, as `quire migrate` does (the all-in-one `quire
   * serve`). `none`: never migrate; wait until `quire migrate` has brought the platform schema to
   * this build (a single service in a cluster, where the migration Job does it).
   */
  migrate?: 'platform' | 'release' | 'none';
  /** Postgres `application_name` of this process's connections. */
  name?: string;
  /** Defaults to pino on stderr at LOG_LEVEL. */
  logger?: Logger;
  /**
   * When METRICS_PORT is not set and the default operations port is taken, take a free one (the
   * all-in-one development start). Without it a taken port stops the start.
   */
  metricsPortFallback?: boolean;
}

/** One process's Quire: what every command and service runs on, and the services it started. */
export interface Runtime {
  readonly config: RuntimeConfig;
  readonly db: Database;
  readonly platform: Platform;
  readonly logger: Logger;
  readonly api: RunningServer | undefined;
  /** The OAuth service on its own port (served without the API). */
  readonly auth: AuthService | undefined;
  /** The OAuth routes answered on the API's port (served with the API, as `npm start` does). */
  readonly authMount: AuthMount | undefined;
  readonly webhooks: WebhooksService | undefined;
  /** The Tenant operator (`quire serve operator`). */
  readonly operator: OperatorService | undefined;
  /** Background jobs (`quire serve worker`). */
  readonly worker: WorkerService | undefined;
  /** Metrics and readiness of a serving process, and its operations port (/metrics, /healthz, /readyz). */
  readonly ops: ServiceOperations | undefined;
  readonly operations: Listening | undefined;
  /**
   * Graceful stop (SIGTERM): unready at once, serving on for SHUTDOWN_DELAY_MS while load balancers
   * notice, then no new connections, in-flight requests and deliveries finish within
   * SHUTDOWN_TIMEOUT_MS, then the pool closes once the statements still running or waiting for a
   * connection are done (a request its client gave up on is still under way), within that time again.
   */
  shutdown(): Promise<void>;
  /** Immediate stop: every server and pool closed now (a command's end, tests). */
  close(): Promise<void>;
}

/** App specifiers from QUIRE_APPS: `frappe` is built in; anything else is a path to an app folder. */
export function appSources(specs: readonly string[]): AppSource[] {
  const sources = specs.map((spec) => (spec === 'frappe' ? frappeApp : { name: path.basename(path.resolve(spec)), root: path.resolve(spec) }));
  if (!sources.some((s) => s.name === 'frappe')) sources.unshift(frappeApp);
  return sources;
}

type Closer = (timeoutMs: number) => Promise<void> | void;

/**
 * The one way Quire starts, for `quire serve`, every other CLI command, the tests and the benchmarks:
 * the database (Postgres at DATABASE_URL, else the embedded one) with the platform schema migrated
 * (or waited for), the configured apps (their controllers, the webhook outbox among them, fixed from
 * here on), the platform caches, the wake-up of webhook delivery after each commit; then, for a
 * serving process, its operations port first (a port that cannot be bound stops the start), then
 * the services asked for.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config } = options;
  const serve = new Set(options.serve ?? []);
  const logger = options.logger ?? pino({ level: config.platform.logLevel, base: { service: options.name ?? 'quire' } }, pino.destination(2));
  // A process that migrates sets the database up; one that waits for `quire migrate` never makes it.
  const url = config.platform.databaseDirectUrl ?? config.platform.databaseUrl;
  if (url && options.migrate !== 'none' && (await createDatabaseIfMissing(url)))
    logger.info({ database: new URL(url).pathname.slice(1) }, 'created the database');
  const db = await openDatabase({
    url: config.platform.databaseUrl,
    directUrl: config.platform.databaseDirectUrl,
    poolMode: config.platform.databasePoolMode,
    dataDir: config.platform.dataDir,
    poolSize: config.platform.dbPoolSize,
    poolIdleSeconds: config.platform.dbPoolIdleSeconds,
    statementTimeoutMs: config.platform.dbStatementTimeoutMs,
    preparedPerConnection: config.platform.dbPreparedPerConnection,
    applicationName: options.name ?? 'quire',
  });
  // Stopping drains the services together (one deadline for all), then closes the rest in
  // reverse order of opening: the operations port, queues, caches, the pool last.
  const drainers: Closer[] = [];
  const closers: Closer[] = [(ms) => db.close(ms)];
  const closeAll = async (timeoutMs: number): Promise<void> => {
    await Promise.all(drainers.splice(0).map(async (drain) => drain(timeoutMs)));
    for (const fn of closers.splice(0).reverse()) await fn(timeoutMs);
  };
  try {
    if (options.migrate === 'none') await waitForPlatformSchema(db, logger);
    else await Platform.migratePlatform(db);
    // The API holds the file store (the files volume); on the embedded database every command does (one process at a time).
    const holdsFiles = serve.has('api') || db.kind === 'pglite';
    const platform = await openPlatform(db, config, await loadApps(appSources(config.platform.apps)), logger, holdsFiles, options.name ?? 'quire');
    closers.push(() => platform.close());
    if (options.migrate === 'release') {
      const report = await migrateRelease(platform);
      if (report.failed) throw new TenantMigrationError({ ...report, failed: report.failed });
    }
    const queuePrefix = config.webhooks.queuePrefix ?? `quire:${await loadDeploymentId(db)}`;
    closers.push(wakeQueueOnCommit(platform, config, queuePrefix));
    closers.push(wakeWorkersOnEnqueue(platform, config, queuePrefix));
    let ops: ServiceOperations | undefined;
    let operations: Listening | undefined;
    if (serve.size > 0) {
      const { ops: serviceOps, closeChecks } = operationsOf(platform, config);
      ops = serviceOps;
      closers.push(closeChecks);
      const alone = serve.size === 1 ? [...serve][0] : undefined;
      const ownPort = alone === 'webhooks' ? config.webhooks.port : alone === 'worker' ? config.worker.port : undefined;
      const port = config.platform.metricsPort ?? ownPort ?? DEFAULT_METRICS_PORT;
      const listener = operationsListener(ops.metrics.registry, ops.readiness);
      const listening = await listen(listener, { port }).catch(async (e: unknown) => {
        if (!options.metricsPortFallback || config.platform.metricsPort !== undefined || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
        logger.warn({ port }, 'the operations port is taken (another Quire running?): using a free one');
        return listen(listener, { port: 0 });
      });
      operations = listening;
      closers.push((ms) => listening.close(ms));
    }
    const started = ops ? await startServices(platform, config, serve, logger, ops, drainers, queuePrefix) : NOT_STARTED;
    const { shutdownDelayMs, shutdownTimeoutMs } = config.platform;
    let stopping: Promise<void> | undefined;
    return {
      config,
      db,
      platform,
      logger,
      ops,
      operations,
      ...started,
      shutdown: () =>
        (stopping ??= (async () => {
          ops?.readiness.markShuttingDown();
          await sleep(shutdownDelayMs);
          await closeAll(shutdownTimeoutMs);
        })()),
      close: () => closeAll(0),
    };
  } catch (e) {
    await closeAll(0);
    throw e;
  }
}

function openPlatform(db: Database, config: RuntimeConfig, apps: LoadedApps, logger: Logger, holdsFiles: boolean, applicationName: string): Promise<Platform> {
  const p = config.platform;
  return loadSecretBox(db, p.encryptionKey).then((secrets) =>
    Platform.open({
      db,
      platformUrl: p.databaseUrl,
      platformDirectUrl: p.databaseDirectUrl,
      // Another cluster's pool: the platform pool's settings, its own size, idle connections closed;
      // and failing fast: one cluster gone must answer its tenants 503 soon, not hold their requests
      // (and their admission turns) until TCP gives up.
      ...(db.kind === 'postgres'
        ? {
            openCluster: (name: string, c: ClusterConnection) =>
              new PgDatabase({
                connectionString: c.url,
                ...(c.directUrl ? { directConnectionString: c.directUrl } : {}),
                poolMode: c.poolMode,
                poolSize: p.clusterPoolSize ?? p.dbPoolSize,
                idleSeconds: p.dbPoolIdleSeconds,
                statementTimeoutMs: p.dbStatementTimeoutMs,
                preparedPerConnection: p.dbPreparedPerConnection,
                applicationName: `${applicationName}:${name}`,
                connectTimeoutMs: p.clusterConnectTimeoutMs,
                keepAlive: true,
              }),
          }
        : {}),
      clusterIdleMs: p.clusterIdleSeconds * 1000,
      apps,
      files: new LocalDiskStore(p.filesDir),
      secrets,
      baseDomain: p.baseDomain,
      defaultTenant: p.defaultTenant,
      refreshIntervalMs: p.cacheRefreshIntervalMs,
      apiKeyTtlMs: p.apiKeyCacheTtlMs,
      metaCache: { maxTenants: p.metaCacheTenants, idleMs: p.metaCacheIdleSeconds * 1000 },
      sessionExpirySeconds: p.sessionExpirySeconds,
      holdsFiles,
      plans: p.plans,
      publicUrl: {
        scheme: p.publicUrlScheme ?? (p.production ? 'https' : 'http'),
        // In development the API's own port is how a browser on this machine reaches it.
        port: p.publicUrlPort ?? (p.production || config.api.port === 0 ? undefined : config.api.port),
      },
      spares: {
        // The embedded database has one session: making spares there would hold up requests.
        count: p.tenantSpares ?? (db.kind === 'pglite' ? 0 : 2),
        onError: (err: unknown) => logger.warn({ err }, 'making spare tenant schemas failed; the next tenant is copied from the template'),
      },
    }),
  );
}

/** A single service in a cluster starts before or during `quire migrate`: it waits, saying so now and then. */
async function waitForPlatformSchema(db: Database, logger: Logger): Promise<void> {
  for (let waited = 0; !(await platformSchemaReady(db)); waited++) {
    if (waited % 10 === 0) logger.warn('the platform schema is not at this version yet: waiting for `quire migrate`');
    await sleep(1000);
  }
}

/** The process's metrics (pools, caches, tenants) and readiness checks (database, schema, Redis, clusters). */
function operationsOf(platform: Platform, config: RuntimeConfig): { ops: ServiceOperations; closeChecks: () => Promise<void> } {
  const metrics = new ProcessMetrics({ tenantLabel: config.platform.metricsTenantLabel });
  metrics.watchPools(() => platform.clusters.opened().map(([name, db]) => [name, db.poolStats()] as const));
  metrics.watchCaches({ meta: () => platform.metas.stats, api_keys: () => platform.apiKeys.stats, sessions: () => platform.sessions.stats });
  metrics.watchTenants(() => platform.tenants.list().length);
  const release = releaseOf(platform.apps);
  metrics.watchSpares(
    () => platform.spares.ready(release),
    () => platform.spares.stats,
  );
  const readiness = new Readiness();
  readiness.onEvaluated((ready) => metrics.setReady(ready));
  const closeChecks = addReadinessChecks(readiness, platform.db, { release, redisUrl: config.webhooks.redisUrl });
  // Another cluster down is reported (/readyz, quire_db_cluster_up) but leaves the process ready:
  // only that cluster's tenants are affected, every replica has the same trouble with it, and taking
  // replicas out of the load balancer would not mend it but stop every other tenant too. The
  // platform database (`database`) stays a readiness check: without it no tenant is served.
  const clusters = new ClusterHealth(() => platform.clusters.opened());
  readiness.addAdvisory(() => clusters.checks());
  metrics.watchClusters(() => clusters.up());
  return { ops: { metrics, readiness }, closeChecks };
}

/**
 * With Redis, every process that writes documents (API, CLI) enqueues the webhook events it
 * committed, so any webhooks process delivers them at once. The queue is opened on the first event.
 * Without Redis an in-process runner (started with the webhooks service) is woken instead, and
 * events written elsewhere are found by its sweep.
 */
function wakeQueueOnCommit(platform: Platform, config: RuntimeConfig, prefix: string): () => Promise<void> {
  const redisUrl = config.webhooks.redisUrl;
  if (!redisUrl) return async () => {};
  let producer: QueueProducer | undefined;
  const unsubscribe = platform.changes.onWebhookEvents((tenant, ids) => (producer ??= new QueueProducer({ redisUrl, prefix })).notify(ids, tenant));
  return async () => {
    unsubscribe();
    await producer?.close();
  };
}

/**
 * With Redis, every process that enqueues jobs (API, CLI) wakes the deployment's workers after
 * commit; they run the jobs (this process never does). Without Redis the in-process runner (the
 * worker service here) is woken by the enqueues themselves.
 */
function wakeWorkersOnEnqueue(platform: Platform, config: RuntimeConfig, prefix: string): () => Promise<void> {
  const redisUrl = config.worker.redisUrl;
  if (!redisUrl) return async () => {};
  let producer: JobsWakeProducer | undefined;
  const unsubscribe = platform.jobs.onEnqueued(() => (producer ??= new JobsWakeProducer(redisUrl, prefix)).notify());
  return async () => {
    unsubscribe();
    await producer?.close();
  };
}

type StartedServices = { -readonly [K in 'api' | 'auth' | 'authMount' | 'webhooks' | 'operator' | 'worker']: Runtime[K] };

const NOT_STARTED: StartedServices = { api: undefined, auth: undefined, authMount: undefined, webhooks: undefined, operator: undefined, worker: undefined };

/** Starts services in dependency order, each added to `closers` as soon as it runs; auth shares the API's port when both run here. */
async function startServices(
  platform: Platform,
  config: RuntimeConfig,
  serve: ReadonlySet<ServiceName>,
  logger: Logger,
  ops: ServiceOperations,
  closers: Closer[],
  queuePrefix: string,
): Promise<StartedServices> {
  const started: StartedServices = { ...NOT_STARTED };
  const child = (service: ServiceName): Logger => (serve.size > 1 ? logger.child({ service }) : logger);
  if (serve.has('webhooks')) {
    // Imported only when served, like the others: a CLI command should not load BullMQ, express or oidc-provider.
    const { startWebhooksService } = await import('@quire/webhooks-service');
    const webhooks = startWebhooksService(platform, config.webhooks, child('webhooks'), ops, queuePrefix);
    started.webhooks = webhooks;
    closers.push((ms) => webhooks.close(ms));
  }
  if (serve.has('worker')) {
    const { startWorkerService } = await import('@quire/worker-service');
    const methodSettings = {
      maxPageLength: config.api.maxPageLength,
      sessionExpirySeconds: platform.sessionExpirySeconds,
      maxFileSize: config.api.maxFileSize,
      defaultSmtpUrl: config.worker.smtpUrl,
    };
    const worker = startWorkerService(platform, config.worker, methodSettings, child('worker'), ops, queuePrefix);
    started.worker = worker;
    closers.push((ms) => worker.close(ms));
  }
  if (serve.has('auth')) {
    const { createAuthMount, startAuthService } = await import('@quire/auth-service');
    if (serve.has('api')) {
      const mount = createAuthMount(platform, config.auth, child('auth'), ops.metrics.registry);
      started.authMount = mount;
      closers.push(() => mount.close());
    } else {
      const auth = await startAuthService(platform, config.auth, child('auth'), ops);
      started.auth = auth;
      closers.push((ms) => auth.close(ms));
    }
  }
  if (serve.has('operator')) {
    const { startOperatorService } = await import('@quire/operator-service');
    const operator = await startOperatorService(platform, config.operator, child('operator'), ops);
    started.operator = operator;
    closers.push((ms) => operator.close(ms));
  }
  if (serve.has('api')) {
    const { startApiServer } = await import('@quire/api');
    const { AUTH_ROUTES } = started.authMount ? await import('@quire/auth-service') : { AUTH_ROUTES: [] };
    const mounted = started.authMount ? { handlers: [started.authMount.router], routes: AUTH_ROUTES } : undefined;
    const api = await startApiServer(platform, config.api, child('api'), ops, mounted, { redisUrl: config.webhooks.redisUrl, prefix: queuePrefix });
    started.api = api;
    closers.push((ms) => api.close(ms));
  }
  return started;
}
