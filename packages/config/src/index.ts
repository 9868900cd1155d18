import path from 'node:path';
import { z } from 'zod';

/**
 * Settings every Quire process shares (database, tenancy, apps). Read once from the environment,
 * typed and validated; nothing else reads process.env for these.
 */
const platformSchema = z.object({
  DATABASE_URL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), 'DATABASE_URL must be a postgres:// URL'),
  BASE_DOMAIN: z.string().trim().toLowerCase().min(1).default('localhost'),
  DEFAULT_TENANT: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v)),
  QUIRE_DATA_DIR: z.string().default('.quire/data'),
  QUIRE_FILES_DIR: z.string().default('.quire/files'),
  QUIRE_APPS: z.string().default('frappe'),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(60_000),
  CACHE_REFRESH_INTERVAL_MS: z.coerce.number().int().min(0).default(5_000),
  SESSION_EXPIRY_SECONDS: z.coerce.number().int().min(60).default(170 * 3600),
  QUIRE_ENCRYPTION_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || Buffer.from(v, 'base64').length === 32, 'QUIRE_ENCRYPTION_KEY must be base64 of 32 bytes'),
  NODE_ENV: z.string().default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface PlatformConfig {
  databaseUrl: string | undefined;
  baseDomain: string;
  defaultTenant: string | undefined;
  /** The embedded database's folder, used when there is no DATABASE_URL. */
  dataDir: string;
  /** Where the local-disk file store keeps uploads. */
  filesDir: string;
  /** App specifiers: `frappe` (built in) or a path to an app folder. */
  apps: string[];
  dbPoolSize: number;
  dbStatementTimeoutMs: number;
  apiKeyCacheTtlMs: number;
  cacheRefreshIntervalMs: number;
  /** Seconds a login session lives without activity (Frappe's session_expiry, 170 h). */
  sessionExpirySeconds: number;
  /** base64 of 32 bytes; without it a key is generated once and kept in the platform schema. */
  encryptionKey: string | undefined;
  production: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export function loadPlatformConfig(env: NodeJS.ProcessEnv = process.env): PlatformConfig {
  const c = parse(platformSchema, env);
  return {
    databaseUrl: c.DATABASE_URL,
    baseDomain: c.BASE_DOMAIN,
    defaultTenant: c.DEFAULT_TENANT,
    dataDir: path.resolve(c.QUIRE_DATA_DIR),
    filesDir: path.resolve(c.QUIRE_FILES_DIR),
    apps: c.QUIRE_APPS.split(',').map((s) => s.trim()).filter(Boolean),
    dbPoolSize: c.DB_POOL_SIZE,
    dbStatementTimeoutMs: c.DB_STATEMENT_TIMEOUT_MS,
    apiKeyCacheTtlMs: c.API_KEY_CACHE_TTL_MS,
    cacheRefreshIntervalMs: c.CACHE_REFRESH_INTERVAL_MS,
    sessionExpirySeconds: c.SESSION_EXPIRY_SECONDS,
    encryptionKey: c.QUIRE_ENCRYPTION_KEY || undefined,
    production: c.NODE_ENV === 'production',
    logLevel: c.LOG_LEVEL,
  };
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
