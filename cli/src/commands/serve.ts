import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadApiConfig, startApiServer, type ApiConfig, type RunningServer } from '@quire/api';
import type { AuthMount, AuthService } from '@quire/auth-service';
import { loadAuthConfig } from '@quire/auth-service/config';
import { createTenant } from '@quire/tenancy';
import { QueueProducer, webhookCapture } from '@quire/webhooks';
import { loadWebhooksConfig, startWebhooksService, type WebhooksService } from '@quire/webhooks-service';
import pino, { type Logger } from 'pino';
import { UsageError } from '../output';
import { openRuntime, type Runtime } from '../runtime';

const DEMO_TENANT = 'demo';

interface DemoCredentials {
  tenant: string;
  api_key: string;
  api_secret: string;
  /** The Administrator's login password (local demo only). */
  admin_password: string;
}

/**
 * First start on the embedded database: a `demo` tenant, whose Administrator key is kept in a
 * git-ignored file next to the data so the printed curl line keeps working on later starts.
 */
async function ensureDemoTenant(rt: Runtime, config: ApiConfig): Promise<DemoCredentials | undefined> {
  const file = path.join(path.dirname(config.platform.dataDir), 'demo-credentials.json');
  if (rt.platform.tenants.get(DEMO_TENANT)) {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8')) as DemoCredentials;
    } catch {
      return undefined;
    }
  }
  const adminPassword = randomBytes(9).toString('base64url');
  const created = await createTenant(rt.platform, { name: DEMO_TENANT, adminPassword });
  const creds: DemoCredentials = { tenant: created.name, api_key: created.api_key, api_secret: created.api_secret, admin_password: adminPassword };
  fs.writeFileSync(file, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  return creds;
}

const SERVICES = ['api', 'webhooks', 'auth'] as const;
type Service = (typeof SERVICES)[number];

/**
 * `quire serve [api|webhooks|auth]`: one service, or (no argument, `npm start`) every service in
 * this process, the auth routes then answered on the API's port. Runs until SIGINT/SIGTERM.
 */
export async function serve(which: string | undefined): Promise<void> {
  if (which !== undefined && !(SERVICES as readonly string[]).includes(which)) {
    throw new UsageError(`Unknown service ${which}: \`quire serve [api|webhooks|auth]\``);
  }
  const run = new Set<Service>(which ? [which as Service] : SERVICES);
  const apiConfig = loadApiConfig();
  const hooksConfig = loadWebhooksConfig();
  const authConfig = loadAuthConfig();
  const logger: Logger = pino({ level: apiConfig.platform.logLevel, base: { service: which ?? 'all' } }, pino.destination(2));
  const rt = await openRuntime(apiConfig.platform, `quire-${which ?? 'all'}`);

  let webhooks: WebhooksService | undefined;
  let producer: QueueProducer | undefined;
  let api: RunningServer | undefined;
  let authMount: AuthMount | undefined;
  let authService: AuthService | undefined;
  if (run.has('auth')) {
    // Loaded only when serving it: oidc-provider and its dependencies are not small.
    const { createAuthMount, startAuthService } = await import('@quire/auth-service');
    if (run.size === 1) authService = await startAuthService(rt.platform, authConfig, logger.child({ service: 'auth' }));
    else authMount = createAuthMount(rt.platform, authConfig, logger.child({ service: 'auth' }));
  }
  if (run.has('webhooks')) webhooks = await startWebhooksService(rt.platform, hooksConfig, logger.child({ service: 'webhooks' }), run.size === 1);
  if (run.has('api')) {
    // Webhook events are written with each change; after commit, wake whatever delivers them.
    if (hooksConfig.redisUrl) producer = new QueueProducer(hooksConfig.redisUrl);
    rt.platform.apps.controllers.register(
      '*',
      webhookCapture({ onCommitted: (_tenant, ids) => (producer ? producer.notify(ids) : webhooks?.wake()) }),
    );
    const demo = apiConfig.platform.databaseUrl ? undefined : await ensureDemoTenant(rt, apiConfig);
    api = await startApiServer(rt.platform, apiConfig, logger, authMount ? [authMount.router] : []);
    const where = apiConfig.platform.databaseUrl ? 'Postgres at DATABASE_URL' : `the embedded database in ${path.relative(process.cwd(), apiConfig.platform.dataDir) || '.'}`;
    const lines = [`Quire API listening on port ${api.port} (${where})`];
    if (demo) {
      lines.push(
        'Try it:',
        `  curl -H "Authorization: token ${demo.api_key}:${demo.api_secret}" http://${demo.tenant}.${apiConfig.platform.baseDomain}:${api.port}/api/resource/ToDo`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  if (authMount) process.stdout.write('Quire OAuth 2.0 / OpenID Connect on the same port: /.well-known/openid-configuration, /oauth/*\n');
  if (authService) process.stdout.write(`Quire OAuth 2.0 / OpenID Connect listening on port ${authService.port} (metrics at /metrics)\n`);
  if (webhooks) {
    const mode = hooksConfig.redisUrl ? 'BullMQ on REDIS_URL' : 'in-process, from the outbox';
    process.stdout.write(`Quire webhooks delivering (${mode}); metrics on port ${webhooks.port}\n`);
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  logger.info('shutting down');
  await api?.close();
  authMount?.close();
  await authService?.close();
  await webhooks?.close();
  await producer?.close();
  await rt.close();
}
