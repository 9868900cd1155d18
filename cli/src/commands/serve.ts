import path from 'node:path';
import { ALL_IN_ONE, createRuntime, loadRuntimeConfig, SERVICES, type Runtime, type ServiceName } from '@quire/runtime';
import { UsageError } from '../output';
import { DEMO_TENANT, demoCredentialsFile, ensureDemoTenant } from './demo';

/** What a person starting the service reads: where it listens, and on a first embedded start a curl line that works. */
async function banner(rt: Runtime): Promise<string[]> {
  const { config, api, auth, authMount, webhooks, worker, operator, operations } = rt;
  const lines: string[] = [];
  if (api) {
    const embedded = !config.platform.databaseUrl;
    const demo = embedded ? await ensureDemoTenant(rt) : undefined;
    const where = embedded ? `the embedded database in ${path.relative(process.cwd(), config.platform.dataDir) || '.'}` : 'Postgres at DATABASE_URL';
    lines.push(`Quire API listening on port ${api.port} (${where})`);
    if (demo) {
      const site = `http://${demo.creds.tenant}.${config.platform.baseDomain}:${api.port}`;
      const file = path.relative(process.cwd(), demoCredentialsFile(rt)) || demoCredentialsFile(rt);
      lines.push('Try it:');
      if (demo.stale) {
        lines.push(
          `  (the API key in ${file} no longer works: new keys were generated in the desk. Use the secret the desk showed,`,
          `   or stop Quire and run \`npx quire keys generate --tenant ${DEMO_TENANT} --user Administrator\`, which updates ${file})`,
        );
      } else {
        lines.push(`  curl -H "Authorization: token ${demo.creds.api_key}:${demo.creds.api_secret}" ${site}/api/resource/ToDo`);
      }
      lines.push(`  the desk: ${site}/login (Administrator, admin_password in ${file})`);
    }
    if (config.platform.defaultTenant) lines.push(`Any other host name is served as ${config.platform.defaultTenant} (DEFAULT_TENANT)`);
  }
  if (authMount) lines.push('Quire OAuth 2.0 / OpenID Connect on the same port: /.well-known/openid-configuration, /oauth/*');
  if (auth) lines.push(`Quire OAuth 2.0 / OpenID Connect listening on port ${auth.port}`);
  if (webhooks) {
    const mode = config.webhooks.redisUrl ? 'BullMQ on REDIS_URL' : 'in-process, from the outbox';
    lines.push(`Quire webhooks delivering (${mode})`);
  }
  if (worker) lines.push(`Quire worker running background jobs (${config.worker.redisUrl ? 'BullMQ on REDIS_URL' : 'in-process, from the jobs table'})`);
  if (operator)
    lines.push(
      `Quire Tenant operator watching namespace ${operator.namespace} (${operator.controller.isLeader ? 'leader' : 'standby until it holds the Lease'})`,
    );
  if (operations) lines.push(`Metrics and health on port ${operations.port}: /metrics, /healthz, /readyz`);
  return lines;
}

/**
 * `quire serve [api|webhooks|auth|operator|worker]`: one service, or (no argument, `npm start`) api, webhooks and auth in
 * this process, the auth routes then answered on the API's port. A single service (a cluster's
 * Deployment) never migrates: it waits for `quire migrate`. SIGTERM or SIGINT stops it gracefully
 * (unready, SHUTDOWN_DELAY_MS, drain within SHUTDOWN_TIMEOUT_MS, exit 0); a second signal stops it now.
 * `--dev` is Frappe's developer mode: error answers carry tracebacks.
 */
export async function serve(which: string | undefined, options: { dev?: boolean } = {}): Promise<void> {
  if (which !== undefined && !(SERVICES as readonly string[]).includes(which)) {
    throw new UsageError(`Unknown service ${which}: \`quire serve [${SERVICES.join('|')}]\``);
  }
  const serve: readonly ServiceName[] = which ? [which as ServiceName] : ALL_IN_ONE;
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.dev) env.QUIRE_DEVELOPER_MODE = 'true';
  // `npm start` on the embedded database: localhost, 127.0.0.1 or any other name reaches the demo.
  const allInOneEmbedded = !which && !env.DATABASE_URL?.trim();
  if (allInOneEmbedded && !env.DEFAULT_TENANT?.trim()) env.DEFAULT_TENANT = DEMO_TENANT;
  const rt = await createRuntime({
    config: loadRuntimeConfig(env),
    serve,
    migrate: which ? 'none' : 'release',
    name: `quire-${which ?? 'all'}`,
    // The all-in-one development start takes a free operations port when the usual one is taken (a
    // second `npm start`); a service given METRICS_PORT, or one in a cluster, fails loudly instead.
    metricsPortFallback: !which,
  });
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
