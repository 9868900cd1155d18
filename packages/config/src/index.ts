import path from 'node:path';
import { z } from 'zod';
import { plansSetting } from './plans';

export { parseByteSize, planCatalogSchema, planSchema, plansSetting, type Plan, type PlanCatalog } from './plans';

/**
 * One setting: the environment variable it is read from, and its schema (parsing, default, checks,
 * and any transform into the value code uses).
 */
export type Setting = readonly [variable: string, schema: z.ZodType];

/** The typed settings a table of `Setting`s reads into. */
export type SettingsOf<S extends Record<string, Setting>> = { [K in keyof S]: z.output<S[K][1]> };

/**
 * Reads a service's settings, declared once as a table (name -> variable and schema). Every
 * process reads its configuration this way, once at start; nothing else reads process.env.
 */
export function readSettings<S extends Record<string, Setting>>(table: S, env: NodeJS.ProcessEnv): SettingsOf<S> {
  const byVariable = parse(z.object(Object.fromEntries(Object.values(table).map(([variable, schema]) => [variable, schema]))), env) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(table).map(([name, [variable]]) => [name, byVariable[variable]])) as SettingsOf<S>;
}

/** An optional text setting: blank counts as unset. */
export const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/** Settings every Quire process shares (database, tenancy, apps, caches, secrets, logging). */
const platformSettings = {
  databaseUrl: ['DATABASE_URL', optionalText.refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), 'DATABASE_URL must be a postgres:// URL')],
  baseDomain: ['BASE_DOMAIN', z.string().trim().toLowerCase().min(1).default('localhost')],
  defaultTenant: ['DEFAULT_TENANT', optionalText],
  /** The embedded database's folder, used when there is no DATABASE_URL. */
  dataDir: [
    'QUIRE_DATA_DIR',
    z
      .string()
      .default('.quire/data')
      .transform((p) => path.resolve(p)),
  ],
  /** Where the local-disk file store keeps uploads. */
  filesDir: [
    'QUIRE_FILES_DIR',
    z
      .string()
      .default('.quire/files')
      .transform((p) => path.resolve(p)),
  ],
  /** App specifiers: `frappe` (built in) or a path to an app folder. */
  apps: [
    'QUIRE_APPS',
    z
      .string()
      .default('frappe')
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
  ],
  /** `transaction` when DATABASE_URL goes through PgBouncer in transaction pooling mode. */
  databasePoolMode: ['DATABASE_POOL_MODE', z.enum(['session', 'transaction']).default('session')],
  /** A direct Postgres URL for LISTEN/NOTIFY when DATABASE_URL is a transaction pooler. */
  databaseDirectUrl: [
    'DATABASE_DIRECT_URL',
    optionalText.refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), 'DATABASE_DIRECT_URL must be a postgres:// URL'),
  ],
  /** The operations port of every serving process (/metrics, /healthz, /readyz; default 9464); 0 picks a free one. */
  metricsPort: ['METRICS_PORT', z.coerce.number().int().min(0).max(65535).optional()],
  /** Adds `quire_tenant_requests_total{tenant}`: one series per tenant, so off unless asked for. */
  metricsTenantLabel: [
    'METRICS_TENANT_LABEL',
    z
      .enum(['true', 'false', '1', '0', ''])
      .default('false')
      .transform((v) => v === 'true' || v === '1'),
  ],
  /** After SIGTERM: how long a process keeps serving while load balancers notice it is unready (none unless behind one: the chart sets it). */
  shutdownDelayMs: ['SHUTDOWN_DELAY_MS', z.coerce.number().int().min(0).max(600_000).default(0)],
  /** After the delay: how long in-flight requests and deliveries get to finish. */
  shutdownTimeoutMs: ['SHUTDOWN_TIMEOUT_MS', z.coerce.number().int().min(0).max(600_000).default(20_000)],
  dbPoolSize: ['DB_POOL_SIZE', z.coerce.number().int().min(1).max(500).default(10)],
  /** Connections at most in each other cluster's pool (quire cluster add); by default DB_POOL_SIZE. */
  clusterPoolSize: ['CLUSTER_POOL_SIZE', z.coerce.number().int().min(1).max(500).optional()],
  /** A cluster none of whose tenants was asked for this long has its pool and listener closed: idle clusters cost no connections. */
  clusterIdleSeconds: ['CLUSTER_IDLE_SECONDS', z.coerce.number().int().min(1).max(86_400).default(300)],
  /**
   * How long a statement waits for a connection to another cluster (a new one, or a free one from a
   * full pool) before its request is answered 503: an unreachable cluster fails its tenants' requests
   * quickly instead of holding them (0: no limit).
   */
  clusterConnectTimeoutMs: ['CLUSTER_CONNECT_TIMEOUT_MS', z.coerce.number().int().min(0).max(600_000).default(5_000)],
  /** How long a pooled connection may sit idle before it is closed (0: never). */
  dbPoolIdleSeconds: ['DB_POOL_IDLE_SECONDS', z.coerce.number().int().min(0).max(86_400).default(300)],
  dbStatementTimeoutMs: ['DB_STATEMENT_TIMEOUT_MS', z.coerce.number().int().min(0).default(30_000)],
  /** Prepared statements each pooled connection keeps (least recently used closed beyond it; 0: none prepared). */
  dbPreparedPerConnection: ['DB_PREPARED_PER_CONNECTION', z.coerce.number().int().min(0).max(100_000).default(2000)],
  apiKeyCacheTtlMs: ['API_KEY_CACHE_TTL_MS', z.coerce.number().int().min(0).default(60_000)],
  cacheRefreshIntervalMs: ['CACHE_REFRESH_INTERVAL_MS', z.coerce.number().int().min(0).default(5_000)],
  /** Tenants whose metadata a process keeps (least recently used dropped beyond it). */
  metaCacheTenants: ['META_CACHE_TENANTS', z.coerce.number().int().min(1).default(10_000)],
  /** A tenant's metadata unused this long is dropped (0: kept until evicted by count). */
  metaCacheIdleSeconds: ['META_CACHE_IDLE_SECONDS', z.coerce.number().int().min(0).default(1800)],
  /** Plans: named bundles of per-tenant limits (JSON; see plans.ts). */
  plans: ['QUIRE_PLANS', plansSetting],
  /** How often each API process adds its tenants' request counts and times to the platform's usage table. */
  usageFlushMs: ['USAGE_FLUSH_MS', z.coerce.number().int().min(100).max(3_600_000).default(10_000)],
  /** How often tenants' database size, file storage and users are measured (one process at a time). */
  usageMeasureMs: ['USAGE_MEASURE_MS', z.coerce.number().int().min(100).max(86_400_000).default(300_000)],
  /** Tenant schemas kept ready ahead of provisioning (default 2 on Postgres, 0 on the embedded database). */
  tenantSpares: ['TENANT_SPARES', z.coerce.number().int().min(0).max(100).optional()],
  /** Seconds a login session lives without activity (Frappe's session_expiry, 170 h). */
  sessionExpirySeconds: [
    'SESSION_EXPIRY_SECONDS',
    z.coerce
      .number()
      .int()
      .min(60)
      .default(170 * 3600),
  ],
  /** base64 of 32 bytes; without it a key is generated once and kept in the platform schema. */
  encryptionKey: [
    'QUIRE_ENCRYPTION_KEY',
    optionalText.refine((v) => v === undefined || Buffer.from(v, 'base64').length === 32, 'QUIRE_ENCRYPTION_KEY must be base64 of 32 bytes'),
  ],
  /** express' `trust proxy` for every HTTP service: X-Forwarded-Proto/Host/For count only from these peers. */
  trustProxy: ['TRUST_PROXY', z.string().default('false').transform(parseTrustProxy)],
  /** The scheme tenants are reached with from outside, for links in emails (default https in production, else http). */
  publicUrlScheme: ['PUBLIC_URL_SCHEME', z.enum(['http', 'https']).optional()],
  /** The port tenants are reached on from outside when it is not the scheme's own (default: none in production, else the API's PORT). */
  publicUrlPort: ['PUBLIC_URL_PORT', z.coerce.number().int().min(1).max(65535).optional()],
  /**
   * Frappe's developer_mode: error answers carry the traceback and the message of unexpected
   * errors. Off unless asked for (`quire serve --dev`), whatever NODE_ENV says.
   */
  developerMode: [
    'QUIRE_DEVELOPER_MODE',
    z
      .enum(['true', 'false', '1', '0', ''])
      .default('false')
      .transform((v) => v === 'true' || v === '1'),
  ],
  production: [
    'NODE_ENV',
    z
      .string()
      .default('development')
      .transform((v) => v === 'production'),
  ],
  logLevel: ['LOG_LEVEL', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')],
} as const satisfies Record<string, Setting>;

export type PlatformConfig = SettingsOf<typeof platformSettings>;

export function loadPlatformConfig(env: NodeJS.ProcessEnv = process.env): PlatformConfig {
  return readSettings(platformSettings, env);
}

/** Parses env with a schema; a bad setting stops the process with a message naming it. */
export function parse<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

/**
 * TRUST_PROXY as express's `trust proxy` takes it: `true`/`false`, a hop count, or addresses and
 * subnets (`loopback, 10.0.0.0/8`). Only then are X-Forwarded-Proto/Host/For believed.
 */
export type TrustProxy = boolean | number | string;

export function parseTrustProxy(text: string): TrustProxy {
  const tp = text.trim().toLowerCase();
  return tp === 'true' ? true : tp === 'false' || tp === '' ? false : /^\d+$/.test(tp) ? Number(tp) : text.trim();
}
