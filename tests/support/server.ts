import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApiServer, type ApiConfig } from '@quire/api';
import type { AuthConfig, AuthMount } from '@quire/auth-service';
import { loadApps, type LoadedApps } from '@quire/apps';
import { loadPlatformConfig } from '@quire/config';
import { PgDatabase } from '@quire/db';
import { LocalDiskStore } from '@quire/files';
import { frappeApp } from '@quire/frappe';
import { createTenant, loadSecretBox, Platform, type CreatedTenant } from '@quire/tenancy';
import { webhookCapture } from '@quire/webhooks';
import { startWebhooksService, type WebhooksConfig, type WebhooksService } from '@quire/webhooks-service';
import pino from 'pino';
import { inject } from 'vitest';

/**
 * A real API server on a free port, over the suite's real Postgres. Every test makes its own
 * tenants through `tenant()`, so tests never share state.
 */
export interface TestServer {
  url: string;
  port: number;
  platform: Platform;
  db: PgDatabase;
  /** The in-process webhook delivery, when the server was started with `webhooks`. */
  webhooks: WebhooksService | undefined;
  /** The OAuth service mounted in front of the API, when the server was started with `auth`. */
  auth: AuthMount | undefined;
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

let apps: Promise<LoadedApps> | undefined;
export function testApps(): Promise<LoadedApps> {
  apps ??= loadApps([frappeApp]);
  return apps;
}

export function databaseUrl(): string {
  return inject('databaseUrl');
}

export function uniqueName(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

export interface ServerOptions {
  production?: boolean;
  defaultTenant?: string;
  maxPageLength?: number;
  apiKeyTtlMs?: number;
  maxFileSize?: number;
  sessionExpirySeconds?: number;
  /** Extra app folders to load besides frappe (test apps with hooks and methods). */
  apps?: string[];
  /** Capture webhook events and deliver them in-process (the `npm start` mode). */
  webhooks?: Partial<Pick<WebhooksConfig, 'allowNets' | 'retry' | 'sweepIntervalMs' | 'concurrency' | 'leaseMarginMs'>>;
  /** Serve the OAuth service in the same process (the `npm start` mode), with these settings. */
  auth?: true | Partial<Pick<AuthConfig, 'accessTokenTtl' | 'refreshTokenTtl' | 'codeTtl'>>;
}

export async function startTestServer(options: ServerOptions = {}): Promise<TestServer> {
  const db = new PgDatabase({ connectionString: databaseUrl(), poolSize: 5 });
  await Platform.migratePlatform(db);
  const platform = await Platform.open({
    db,
    files: new LocalDiskStore(fs.mkdtempSync(path.join(os.tmpdir(), 'quire-files-'))),
    secrets: await loadSecretBox(db, undefined),
    // A server that registers controllers of its own (webhook capture) gets its own app registry.
    apps: options.apps || options.webhooks ? await loadApps([frappeApp, ...(options.apps ?? []).map((root) => ({ name: path.basename(root), root }))]) : await testApps(),
    ...(options.sessionExpirySeconds !== undefined ? { sessionExpirySeconds: options.sessionExpirySeconds } : {}),
    baseDomain: 'localhost',
    defaultTenant: options.defaultTenant,
    refreshIntervalMs: 1000,
    ...(options.apiKeyTtlMs !== undefined ? { apiKeyTtlMs: options.apiKeyTtlMs } : {}),
  });
  const base = loadPlatformConfig({ NODE_ENV: options.production ? 'production' : 'test', DATABASE_URL: databaseUrl() });
  const config: ApiConfig = {
    platform: base,
    port: 0,
    host: '127.0.0.1',
    maxPageLength: options.maxPageLength ?? 1000,
    maxBodySize: '1mb',
    trustProxy: false,
    maxFileSize: options.maxFileSize ?? 1024 * 1024,
  };
  let webhooks: WebhooksService | undefined;
  if (options.webhooks) {
    const hooksConfig: WebhooksConfig = {
      platform: base,
      redisUrl: undefined,
      allowNets: [],
      concurrency: 8,
      sweepIntervalMs: 50,
      lockDurationMs: 15_000,
      leaseMarginMs: 10_000,
      retry: { baseDelayMs: 100, maxDelayMs: 2000, maxAgeMs: 60_000, jitter: 0 },
      port: 0,
      ...options.webhooks,
    };
    webhooks = await startWebhooksService(platform, hooksConfig, pino({ level: 'silent' }), false);
    const service = webhooks;
    platform.apps.controllers.register('*', webhookCapture({ onCommitted: () => service.wake() }));
  }
  let auth: AuthMount | undefined;
  if (options.auth) {
    const authConfig: AuthConfig = { platform: base, port: 0, trustProxy: false, accessTokenTtl: 3600, refreshTokenTtl: 86_400, codeTtl: 60, ...(options.auth === true ? {} : options.auth) };
    // Loaded only by the servers that serve OAuth (oidc-provider is not small).
    const { createAuthMount } = await import('@quire/auth-service');
    auth = createAuthMount(platform, authConfig, pino({ level: 'silent' }));
  }
  const running = await startApiServer(platform, config, pino({ level: 'silent' }), auth ? [auth.router] : []);
  const url = `http://127.0.0.1:${running.port}`;
  return {
    url,
    port: running.port,
    platform,
    db,
    async tenant(prefix = 't', name?: string) {
      const created = await createTenant(platform, { name: name ?? uniqueName(prefix) });
      const auth = `token ${created.api_key}:${created.api_secret}`;
      return { ...created, auth, call: (method, path, o = {}) => call(url, created.name, method, path, { auth, ...o }) };
    },
    webhooks,
    auth,
    async close() {
      await running.close();
      auth?.close();
      await webhooks?.close();
      await platform.close();
      await db.close();
    },
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
