import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ALL_IN_ONE, createRuntime, loadRuntimeConfig, SERVICES, type Runtime, type ServiceName } from '@quire/runtime';
import { createTenant } from '@quire/tenancy';
import { UsageError } from '../output';

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
async function ensureDemoTenant(rt: Runtime): Promise<DemoCredentials | undefined> {
  const file = path.join(path.dirname(rt.config.platform.dataDir), 'demo-credentials.json');
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

/** What a person starting the service reads: where it listens, and on a first embedded start a curl line that works. */
async function banner(rt: Runtime): Promise<string[]> {
  const { config, api, auth, authMount, webhooks, operator, operations } = rt;
  const lines: string[] = [];
  if (api) {
    const embedded = !config.platform.databaseUrl;
    const demo = embedded ? await ensureDemoTenant(rt) : undefined;
    const where = embedded ? `the embedded database in ${path.relative(process.cwd(), config.platform.dataDir) || '.'}` : 'Postgres at DATABASE_URL';
    lines.push(`Quire API listening on port ${api.port} (${where})`);
    if (demo) {
      lines.push(
        'Try it:',
        `  curl -H "Authorization: token ${demo.api_key}:${demo.api_secret}" http://${demo.tenant}.${config.platform.baseDomain}:${api.port}/api/resource/ToDo`,
        `  the desk: http://${demo.tenant}.${config.platform.baseDomain}:${api.port}/login (Administrator, admin_password in demo-credentials.json beside the data)`,
      );
    }
  }
  if (authMount) lines.push('Quire OAuth 2.0 / OpenID Connect on the same port: /.well-known/openid-configuration, /oauth/*');
  if (auth) lines.push(`Quire OAuth 2.0 / OpenID Connect listening on port ${auth.port}`);
  if (webhooks) {
    const mode = config.webhooks.redisUrl ? 'BullMQ on REDIS_URL' : 'in-process, from the outbox';
    lines.push(`Quire webhooks delivering (${mode})`);
  }
  if (operator)
    lines.push(
      `Quire Tenant operator watching namespace ${operator.namespace} (${operator.controller.isLeader ? 'leader' : 'standby until it holds the Lease'})`,
    );
  if (operations) lines.push(`Metrics and health on port ${operations.port}: /metrics, /healthz, /readyz`);
  return lines;
}

/**
 * `quire serve [api|webhooks|auth|operator]`: one service, or (no argument, `npm start`) api, webhooks and auth in
 * this process, the auth routes then answered on the API's port. A single service (a cluster's
 * Deployment) never migrates: it waits for `quire migrate`. SIGTERM or SIGINT stops it gracefully
 * (unready, SHUTDOWN_DELAY_MS, drain within SHUTDOWN_TIMEOUT_MS, exit 0); a second signal stops it now.
 */
export async function serve(which: string | undefined): Promise<void> {
  if (which !== undefined && !(SERVICES as readonly string[]).includes(which)) {
    throw new UsageError(`Unknown service ${which}: \`quire serve [${SERVICES.join('|')}]\``);
  }
  const serve: readonly ServiceName[] = which ? [which as ServiceName] : ALL_IN_ONE;
  const rt = await createRuntime({ config: loadRuntimeConfig(), serve, migrate: which ? 'none' : 'release', name: `quire-${which ?? 'all'}` });
  process.stdout.write(`${(await banner(rt)).join('\n')}\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const started = Date.now();
  rt.logger.info({ signal, delayMs: rt.config.platform.shutdownDelayMs, timeoutMs: rt.config.platform.shutdownTimeoutMs }, 'shutting down');
  const again = (): void => {
    rt.logger.warn('second signal: stopping now');
    void rt.close();
  };
  process.once('SIGINT', again);
  process.once('SIGTERM', again);
  await rt.shutdown();
  rt.logger.info({ ms: Date.now() - started }, 'stopped');
}
