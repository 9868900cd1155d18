import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadApiConfig, startApiServer, type ApiConfig } from '@quire/api';
import { createTenant } from '@quire/tenancy';
import pino from 'pino';
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

/** `quire serve [api]`: runs the API service until SIGINT/SIGTERM. */
export async function serve(service: string | undefined): Promise<void> {
  if (service !== undefined && service !== 'api') {
    throw new UsageError(`The ${service} service is not part of this release yet; \`quire serve\` and \`quire serve api\` run the API.`);
  }
  const config = loadApiConfig();
  const logger = pino({ level: config.platform.logLevel, base: { service: 'api' } }, pino.destination(2));
  const rt = await openRuntime(config.platform, 'quire-api');
  const demo = config.platform.databaseUrl ? undefined : await ensureDemoTenant(rt, config);
  const server = await startApiServer(rt.platform, config, logger);
  const where = config.platform.databaseUrl ? 'Postgres at DATABASE_URL' : `the embedded database in ${path.relative(process.cwd(), config.platform.dataDir) || '.'}`;
  const lines = [`Quire API listening on port ${server.port} (${where})`];
  if (demo) {
    lines.push(
      'Try it:',
      `  curl -H "Authorization: token ${demo.api_key}:${demo.api_secret}" http://${demo.tenant}.${config.platform.baseDomain}:${server.port}/api/resource/ToDo`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  logger.info('shutting down');
  await server.close();
  await rt.close();
}
