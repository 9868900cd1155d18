import path from 'node:path';
import type { RunningServer } from '@quire/api';
import { loadApps, type AppSource, type LoadedApps } from '@quire/apps';
import type { AuthMount, AuthService } from '@quire/auth-service';
import { openDatabase, type Database } from '@quire/db';
import { LocalDiskStore } from '@quire/files';
import { frappeApp } from '@quire/frappe';
import { loadSecretBox, Platform } from '@quire/tenancy';
import { QueueProducer } from '@quire/webhooks';
import type { WebhooksService } from '@quire/webhooks-service';
import pino, { type Logger } from 'pino';
import type { RuntimeConfig } from './config';

/** The services one process can run; `quire serve` with none named runs them all. */
export const SERVICES = ['api', 'webhooks', 'auth'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface RuntimeOptions {
  config: RuntimeConfig;
  /** Services to start; none for a command that only reads and writes documents. */
  serve?: readonly ServiceName[];
  /** Postgres `application_name` of this process's connections. */
  name?: string;
  /** Defaults to pino on stderr at LOG_LEVEL. */
  logger?: Logger;
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
  close(): Promise<void>;
}

/** App specifiers from QUIRE_APPS: `frappe` is built in; anything else is a path to an app folder. */
export function appSources(specs: readonly string[]): AppSource[] {
  const sources = specs.map((spec) => (spec === 'frappe' ? frappeApp : { name: path.basename(path.resolve(spec)), root: path.resolve(spec) }));
  if (!sources.some((s) => s.name === 'frappe')) sources.unshift(frappeApp);
  return sources;
}

/**
 * The one way Quire starts, for `quire serve`, every other CLI command, the tests and the benchmarks:
 * the database (Postgres at DATABASE_URL, else the embedded one) with the platform schema migrated,
 * the configured apps (their controllers, the webhook outbox among them, fixed from here on), the
 * platform caches, the wake-up of webhook delivery after each commit, then the services asked for.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config } = options;
  const serve = new Set(options.serve ?? []);
  const logger = options.logger ?? pino({ level: config.platform.logLevel, base: { service: options.name ?? 'quire' } }, pino.destination(2));
  const db = await openDatabase({
    url: config.platform.databaseUrl,
    dataDir: config.platform.dataDir,
    poolSize: config.platform.dbPoolSize,
    statementTimeoutMs: config.platform.dbStatementTimeoutMs,
    applicationName: options.name ?? 'quire',
  });
  const closers: Array<() => Promise<void> | void> = [() => db.close()];
  const close = async (): Promise<void> => {
    for (const fn of closers.splice(0).reverse()) await fn();
  };
  try {
    await Platform.migratePlatform(db);
    const platform = await openPlatform(db, config, await loadApps(appSources(config.platform.apps)));
    closers.push(() => platform.close());
    closers.push(wakeQueueOnCommit(platform, config));
    const services = await startServices(platform, config, serve, logger);
    closers.push(...services.closers);
    return { config, db, platform, logger, ...services.started, close };
  } catch (e) {
    await close();
    throw e;
  }
}

function openPlatform(db: Database, config: RuntimeConfig, apps: LoadedApps): Promise<Platform> {
  const p = config.platform;
  return loadSecretBox(db, p.encryptionKey).then((secrets) =>
    Platform.open({
      db,
      apps,
      files: new LocalDiskStore(p.filesDir),
      secrets,
      baseDomain: p.baseDomain,
      defaultTenant: p.defaultTenant,
      refreshIntervalMs: p.cacheRefreshIntervalMs,
      apiKeyTtlMs: p.apiKeyCacheTtlMs,
      sessionExpirySeconds: p.sessionExpirySeconds,
    }),
  );
}

/**
 * With Redis, every process that writes documents (API, CLI) enqueues the webhook events it
 * committed, so any webhooks process delivers them at once. The queue is opened on the first event.
 * Without Redis an in-process runner (started with the webhooks service) is woken instead, and
 * events written elsewhere are found by its sweep.
 */
function wakeQueueOnCommit(platform: Platform, config: RuntimeConfig): () => Promise<void> {
  const redisUrl = config.webhooks.redisUrl;
  if (!redisUrl) return async () => {};
  let producer: QueueProducer | undefined;
  const unsubscribe = platform.changes.onWebhookEvents((_tenant, ids) => (producer ??= new QueueProducer(redisUrl)).notify(ids));
  return async () => {
    unsubscribe();
    await producer?.close();
  };
}

interface StartedServices {
  started: { -readonly [K in 'api' | 'auth' | 'authMount' | 'webhooks']: Runtime[K] };
  closers: Array<() => Promise<void> | void>;
}

/** Starts services in dependency order; auth shares the API's port when both run here. */
async function startServices(platform: Platform, config: RuntimeConfig, serve: ReadonlySet<ServiceName>, logger: Logger): Promise<StartedServices> {
  const closers: StartedServices['closers'] = [];
  const started: StartedServices['started'] = { api: undefined, auth: undefined, authMount: undefined, webhooks: undefined };
  const child = (service: ServiceName): Logger => (serve.size > 1 ? logger.child({ service }) : logger);
  if (serve.has('webhooks')) {
    // Imported only when served, like the others: a CLI command should not load BullMQ, express or oidc-provider.
    const { startWebhooksService } = await import('@quire/webhooks-service');
    const webhooks = await startWebhooksService(platform, config.webhooks, child('webhooks'), serve.size === 1);
    started.webhooks = webhooks;
    closers.push(() => webhooks.close());
  }
  if (serve.has('auth')) {
    const { createAuthMount, startAuthService } = await import('@quire/auth-service');
    if (serve.has('api')) {
      const mount = createAuthMount(platform, config.auth, child('auth'));
      started.authMount = mount;
      closers.push(() => mount.close());
    } else {
      const auth = await startAuthService(platform, config.auth, child('auth'));
      started.auth = auth;
      closers.push(() => auth.close());
    }
  }
  if (serve.has('api')) {
    const { startApiServer } = await import('@quire/api');
    const api = await startApiServer(platform, config.api, child('api'), started.authMount ? [started.authMount.router] : []);
    started.api = api;
    closers.push(() => api.close());
  }
  return { started, closers };
}
