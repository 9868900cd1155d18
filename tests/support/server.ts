import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AuthConfig, AuthMount } from '@quire/auth-service';
import { loadPlatformConfig } from '@quire/config';
import type { Database } from '@quire/db';
import { loadOperatorConfig } from '@quire/operator-service';
import { createRuntime, type ServiceName } from '@quire/runtime';
import { createTenant, type CreatedTenant, type Platform } from '@quire/tenancy';
import type { WebhooksConfig, WebhooksService } from '@quire/webhooks-service';
import type { WorkerConfig, WorkerService } from '@quire/worker-service';
import pino from 'pino';
import { inject } from 'vitest';
import { throughPooler } from './database-env';

/**
 * A real API server on a free port, over the suite's real Postgres, started the one way Quire
 * starts (createRuntime). Every test makes its own tenants through `tenant()`, so tests never
 * share state.
 */
export interface TestServer {
  url: string;
  port: number;
  platform: Platform;
  db: Database;
  /** The in-process webhook delivery, when the server was started with `webhooks`. */
  webhooks: WebhooksService | undefined;
  worker: WorkerService | undefined;
  /** The OAuth service mounted in front of the API, when the server was started with `auth`. */
  auth: AuthMount | undefined;
  /** The operations port: /metrics, /healthz, /readyz. */
  opsUrl: string;
  /** A fresh tenant with its Administrator's credentials (`name` picks the exact name). */
  tenant(prefix?: string, name?: string): Promise<TestTenant>;
  close(): Promise<void>;
}

export interface TestTenant extends CreatedTenant {
  /** `Authorization: token key:secret` for the Administrator. */
  auth: string;
  /** Calls this tenant's API (X-Frappe-Site-Name) as the Administrator unless `auth` is given. */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
}

export interface CallOptions {
  /** JSON body; or set `form` for application/x-www-form-urlencoded. */
  json?: unknown;
  form?: Record<string, string>;
  body?: string;
  query?: Record<string, string | number | boolean>;
  headers?: Record<string, string>;
  /** Authorization header value; `null` sends none (Guest). */
  auth?: string | null;
}

export interface CallResult {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

export function databaseUrl(): string {
  return inject('databaseUrl');
}

export function uniqueName(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

export interface ServerOptions {
  production?: boolean;
  /** QUIRE_DEVELOPER_MODE: error answers carry tracebacks. */
  developerMode?: boolean;
  /** Another database than the suite's (a test whose outbox no other test's runner may sweep). */
  databaseUrl?: string;
  defaultTenant?: string;
  maxPageLength?: number;
  apiKeyTtlMs?: number;
  maxFileSize?: number;
  sessionExpirySeconds?: number;
  /** Extra app folders to load besides frappe (test apps with hooks and methods). */
  apps?: string[];
  /** METRICS_TENANT_LABEL: count requests per tenant. */
  metricsTenantLabel?: boolean;
  /** Deliver webhook events in-process (the `npm start` mode). */
  webhooks?: Partial<Pick<WebhooksConfig, 'allowNets' | 'retry' | 'sweepIntervalMs' | 'concurrency' | 'leaseMarginMs'>>;
  /** REDIS_URL (webhook and job wake-ups, realtime between processes) and the deployment's prefix there (servers that share one share it). */
  redis?: { url: string; prefix: string };
  /** Fair admission per tenant (TENANT_MAX_CONNECTIONS, TENANT_QUEUE_LENGTH, TENANT_QUEUE_WAIT_MS); the defaults otherwise. */
  admission?: { maxConnections?: number; queueLength?: number; queueWaitMs?: number };
  /** QUIRE_PLANS: the operator's plans (JSON of a PlanCatalog). */
  plans?: unknown;
  /** USAGE_FLUSH_MS and USAGE_MEASURE_MS: how often usage is added up and measured. */
  usage?: { flushMs?: number; measureMs?: number };
  /** QUIRE_FILES_DIR (a fresh temporary folder otherwise): a CLI run beside the server reads the same files. */
  filesDir?: string;
  /** Serve the OAuth service in the same process (the `npm start` mode), with these settings. */
  auth?: true | Partial<Pick<AuthConfig, 'accessTokenTtl' | 'refreshTokenTtl' | 'codeTtl'>>;
  /** Run background jobs in this process (in-process without `redisUrl`, BullMQ with it), with these settings. */
  worker?: true | Partial<WorkerConfig>;
}

/** The environment a test server's platform settings are read from (through the real config loader). */
export function platformEnv(options: ServerOptions = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: options.production ? 'production' : 'test',
    DATABASE_URL: options.databaseUrl ?? databaseUrl(),
    DB_POOL_SIZE: '5',
    BASE_DOMAIN: 'localhost',
    CACHE_REFRESH_INTERVAL_MS: '1000',
    QUIRE_FILES_DIR: options.filesDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'quire-files-')),
    QUIRE_APPS: ['frappe', ...(options.apps ?? [])].join(','),
    LOG_LEVEL: 'silent',
    METRICS_PORT: '0',
    SHUTDOWN_DELAY_MS: '0',
  };
  if (options.defaultTenant !== undefined) env.DEFAULT_TENANT = options.defaultTenant;
  if (options.developerMode) env.QUIRE_DEVELOPER_MODE = 'true';
  if (options.apiKeyTtlMs !== undefined) env.API_KEY_CACHE_TTL_MS = String(options.apiKeyTtlMs);
  if (options.sessionExpirySeconds !== undefined) env.SESSION_EXPIRY_SECONDS = String(options.sessionExpirySeconds);
  if (options.metricsTenantLabel) env.METRICS_TENANT_LABEL = 'true';
  if (options.plans !== undefined) env.QUIRE_PLANS = JSON.stringify(options.plans);
  if (options.usage?.flushMs !== undefined) env.USAGE_FLUSH_MS = String(options.usage.flushMs);
  if (options.usage?.measureMs !== undefined) env.USAGE_MEASURE_MS = String(options.usage.measureMs);
  return throughPooler(env);
}

export async function startTestServer(options: ServerOptions = {}): Promise<TestServer> {
  const platform = loadPlatformConfig(platformEnv(options));
  const serve: ServiceName[] = [
    'api',
    ...(options.webhooks ? (['webhooks'] as const) : []),
    ...(options.auth ? (['auth'] as const) : []),
    ...(options.worker ? (['worker'] as const) : []),
  ];
  const rt = await createRuntime({
    name: 'quire-test',
    serve,
    logger: pino({ level: 'silent' }),
    config: {
      platform,
      api: {
        platform,
        port: 0,
        host: '127.0.0.1',
        maxPageLength: options.maxPageLength ?? 1000,
        maxBodySize: '1mb',
        maxFileSize: options.maxFileSize ?? 1024 * 1024,
        tenantMaxConnections: options.admission?.maxConnections,
        tenantQueueLength: options.admission?.queueLength ?? 100,
        tenantQueueWaitMs: options.admission?.queueWaitMs ?? 2000,
      },
      webhooks: {
        platform,
        redisUrl: options.redis?.url,
        queuePrefix: options.redis?.prefix,
        allowNets: [],
        concurrency: 8,
        tenantMaxInFlight: undefined,
        sweepIntervalMs: 50,
        leaseMarginMs: 10_000,
        retry: { baseDelayMs: 100, maxDelayMs: 2000, maxAgeMs: 60_000, jitter: 0 },
        port: 0,
        ...options.webhooks,
      },
      auth: { platform, port: 0, accessTokenTtl: 3600, refreshTokenTtl: 86_400, codeTtl: 60, ...(options.auth === true ? {} : options.auth) },
      operator: loadOperatorConfig({}),
      worker: {
        redisUrl: options.redis?.url,
        concurrency: 4,
        queueWindow: 32,
        sweepIntervalMs: 200,
        lockMs: 30_000,
        smtpUrl: undefined,
        port: 0,
        ...(options.worker === true ? {} : options.worker),
      },
    },
  });
  const port = rt.api!.port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    platform: rt.platform,
    db: rt.db,
    async tenant(prefix = 't', name?: string) {
      const created = await createTenant(rt.platform, { name: name ?? uniqueName(prefix) });
      const auth = `token ${created.api_key}:${created.api_secret}`;
      return { ...created, auth, call: (method, path, o = {}) => call(url, created.name, method, path, { auth, ...o }) };
    },
    webhooks: rt.webhooks,
    worker: rt.worker,
    auth: rt.authMount,
    opsUrl: `http://127.0.0.1:${rt.operations?.port ?? 0}`,
    close: () => rt.close(),
  };
}

/** One HTTP request to a tenant of a test server. */
export async function call(baseUrl: string, site: string, method: string, path: string, o: CallOptions = {}): Promise<CallResult> {
  const url = new URL(path, baseUrl);
  for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { 'X-Frappe-Site-Name': site, Accept: 'application/json', ...(o.headers ?? {}) };
  if (o.auth) headers.Authorization = o.auth;
  let body: string | undefined = o.body;
  if (o.json !== undefined) {
    body = JSON.stringify(o.json);
    headers['Content-Type'] ??= 'application/json';
  } else if (o.form) {
    body = new URLSearchParams(o.form).toString();
    headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
  }
  const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}
