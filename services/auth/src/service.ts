import { listen, withOperations, type ServiceOperations } from '@quire/http';
import { RouteTable } from '@quire/metrics';
import { activeGrantCount, purgeExpiredModels } from '@quire/oauth';
import type { Platform } from '@quire/tenancy';
import express, { type Router } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { tenantStore } from './adapter';
import { createAuthRouter } from './app';
import type { AuthContext } from './context';
import { ProviderRegistry } from './registry';
import type { AuthConfig } from './config';
import { AuthMetrics } from './metrics';
import { FRAPPE_OAUTH_PATHS } from './routes/frappe';

/** The auth service's routes as templates: the `route` label of its request metrics. */
export const AUTH_ROUTES: readonly string[] = [
  '/oauth/auth',
  '/oauth/token',
  '/oauth/token/revocation',
  '/oauth/token/introspection',
  '/oauth/jwks',
  '/oauth/me',
  '/oauth/session/end',
  '/oauth/session/end/confirm',
  '/oauth/session/end/success',
  '/oauth/interaction/:uid',
  '/oauth/interaction/:uid/login',
  '/oauth/interaction/:uid/consent',
  '/.well-known/openid-configuration',
  ...FRAPPE_OAUTH_PATHS,
];

const PURGE_INTERVAL_MS = 10 * 60_000;

async function purgeExpired(platform: Platform, tenants: string[], logger: Logger): Promise<void> {
  for (const name of tenants) {
    const tenant = platform.tenants.get(name);
    if (!tenant) continue;
    try {
      await purgeExpiredModels(tenantStore(platform, tenant).db(), tenant.schema);
    } catch (e) {
      logger.warn({ err: e, tenant: name }, 'could not purge expired OAuth models');
    }
  }
}

export interface AuthMount {
  /** Mount before the API's routes: it answers /oauth/*, /.well-known/* and Frappe's oauth2 paths. */
  router: Router;
  metrics: AuthMetrics;
  registry: ProviderRegistry;
  close(): void;
}

/**
 * The auth service's routes and state for one process: providers per tenant and origin, rebuilt
 * when a tenant's signing keys change (announced by `quire oauth rotate-keys` on any process).
 */
export function createAuthMount(platform: Platform, config: AuthConfig, logger: Logger, registry: Registry): AuthMount {
  // The gauge is read on a scrape only, once `providers` (below: it needs the metrics) exists.
  const metrics = new AuthMetrics(registry, async () => {
    let total = 0;
    for (const name of providers.tenants()) {
      const tenant = platform.tenants.get(name);
      if (tenant) total += await activeGrantCount(tenantStore(platform, tenant).db(), tenant.schema);
    }
    return total;
  });
  // oidc-provider signs its interaction and session cookies; every process must use the same keys.
  const cookieKeys = [platform.secrets.derive('oidc-provider cookies').toString('base64url')];
  const ctx: AuthContext = { platform, config, metrics, cookieKeys, logger };
  const providers = new ProviderRegistry(ctx);
  const unsubscribe = platform.oauth.onKeysChanged((tenant) => providers.forget(tenant));
  // Expired sessions, interactions, codes and grants are invisible at once and deleted now and then.
  const purge = setInterval(() => void purgeExpired(platform, providers.tenants(), logger), PURGE_INTERVAL_MS);
  purge.unref();
  return {
    router: createAuthRouter(ctx, providers),
    metrics,
    registry: providers,
    close() {
      clearInterval(purge);
      unsubscribe();
    },
  };
}

export interface AuthService {
  port: number;
  metrics: AuthMetrics;
  /** Stops accepting and lets requests in flight finish for up to `timeoutMs`. */
  close(timeoutMs?: number): Promise<void>;
}

/** `quire serve auth`: the auth routes on AUTH_PORT, with /healthz and /readyz (metrics are on the operations port). */
export async function startAuthService(platform: Platform, config: AuthConfig, logger: Logger, ops: ServiceOperations): Promise<AuthService> {
  const mount = createAuthMount(platform, config, logger, ops.metrics.registry);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.platform.trustProxy);
  app.use(mount.router);
  app.use((_req, res) => {
    res.status(404).json({ error: 'not_found', error_description: 'Not an endpoint of the auth service' });
  });
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    logger.error({ err }, 'auth service error');
    if (!res.headersSent) res.status(500).json({ error: 'server_error', error_description: 'An unexpected error occurred' });
  });
  const server = await listen(withOperations(ops, new RouteTable(AUTH_ROUTES), app), { port: config.port });
  return {
    port: server.port,
    metrics: mount.metrics,
    async close(timeoutMs?: number) {
      mount.close();
      await server.close(timeoutMs);
    },
  };
}
