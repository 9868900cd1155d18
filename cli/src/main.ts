import { Command, CommanderError } from 'commander';
import { migrate } from './commands/migrate';
import { clusterAdd, clusterDrain, clusterList, clusterSet } from './commands/cluster';
import { tenantMove } from './commands/tenant-move';
import { tenantBackup, tenantRestore } from './commands/tenant-backup';
import { oauthClientCreate, oauthRotateKeys } from './commands/oauth';
import { serve } from './commands/serve';
import { tenantCreate, tenantDrop, tenantList, tenantResume, tenantSet, tenantSuspend, tenantUsage } from './commands/tenant';
import { keysGenerate, userCreate } from './commands/user';
import { ping } from './commands/ping';
import { print, printError, runCommand, UsageError } from './output';

/** A repeatable option's values. */
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const ENVIRONMENT = `
Environment: DATABASE_URL (else an embedded database in QUIRE_DATA_DIR), PORT, BASE_DOMAIN, DEFAULT_TENANT,
REDIS_URL (webhook queue), QUIRE_APPS, LOG_LEVEL; see the README for every setting.`;

/** The `quire` command: each subcommand is a thin call into the platform over one runtime. */
function program(json: boolean): Command {
  const quire = new Command('quire')
    .description('Quire: tenants, users, keys, OAuth clients, migrations, and the services')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText('after', ENVIRONMENT)
    // With --json, a usage error is one JSON object on stdout (main), like every other result.
    .configureOutput({ writeErr: (text) => (json ? undefined : process.stderr.write(text)) })
    .showHelpAfterError()
    .exitOverride();

  quire
    .command('migrate')
    .description("bring the platform and every tenant to this build's release (resumable; concurrent runs wait for each other)")
    .action(() => runCommand(quire, (rt) => migrate(rt, { json })));

  const cluster = quire.command('cluster').description("the Postgres clusters tenants' schemas live on");
  cluster
    .command('add <name>')
    .description('register a cluster (refused unless it answers); new tenants land on it by weight')
    .requiredOption(
      '--url <url>',
      'postgres://user:password@host:port/database, env:VARIABLE or file:/path (a mounted Secret); a password is stored encrypted, never printed',
    )
    .option('--direct-url <url>', 'a direct URL for LISTEN when --url goes through a transaction pooler (same forms)')
    .option('--pool-mode <mode>', 'session (default) or transaction (--url is PgBouncer in transaction mode)')
    .option('--weight <n>', 'its share of new tenants (default 1)')
    .action((name: string, o: { url: string; directUrl?: string; poolMode?: string; weight?: string }) => runCommand(quire, (rt) => clusterAdd(rt, name, o)));
  cluster
    .command('list')
    .description('every cluster, its weight, state and tenant count (passwords never shown)')
    .action(() => runCommand(quire, clusterList));
  cluster
    .command('drain <name>')
    .description('no new tenant or move lands on it; its tenants stay served')
    .action((name: string) => runCommand(quire, (rt) => clusterDrain(rt, name, true)));
  cluster
    .command('undrain <name>')
    .description('take new tenants again')
    .action((name: string) => runCommand(quire, (rt) => clusterDrain(rt, name, false)));
  cluster
    .command('set <name>')
    .description("change a cluster's weight")
    .option('--weight <n>', 'its share of new tenants')
    .action((name: string, o: { weight?: string }) => runCommand(quire, (rt) => clusterSet(rt, name, o)));

  const tenant = quire.command('tenant').description('create, list, drop and configure tenants');
  tenant
    .command('create <name>')
    .description('a new tenant with its schema and an Administrator API key')
    .option('--domain <host>', 'a custom domain (repeatable)', collect, [])
    .option('--admin-password <password>', "the Administrator's login password (default: a random one, printed once)")
    .option('--admin-email <email>', "the Administrator's email (default admin@example.com)")
    .option('--plan <name>', 'its plan, one of QUIRE_PLANS (default: the default plan)')
    .option('--cluster <name>', 'the Postgres cluster its schema goes on (default: the one with the most room by weight)')
    .action((name: string, o: { domain: string[]; adminPassword?: string; adminEmail?: string; plan?: string; cluster?: string }) =>
      runCommand(quire, (rt) =>
        tenantCreate(rt, name, { domains: o.domain, adminPassword: o.adminPassword, adminEmail: o.adminEmail, plan: o.plan, cluster: o.cluster }),
      ),
    );
  tenant
    .command('move <name>')
    .description('move its schema to another cluster while it is served (logical replication; writes held about a second at the switch); run again to resume')
    .requiredOption('--to <cluster>', 'the cluster it goes to')
    .option('--keep-source', 'keep the old copy, sealed against writes, for a rollback', false)
    .action((name: string, o: { to: string; keepSource: boolean }) => runCommand(quire, (rt) => tenantMove(rt, name, { ...o, json })));
  tenant
    .command('backup <name>')
    .description('one tenant on its own in one file: its data (one consistent snapshot), settings and uploaded files')
    .requiredOption('--out <file>', 'the file written (complete or not at all)')
    .action((name: string, o: { out: string }) => runCommand(quire, (rt) => tenantBackup(rt, name, { out: o.out, json })));
  tenant
    .command('restore <file>')
    .description("a tenant's backup as a new tenant (--as), or in place of its data (--replace); exact or nothing, migrated to this release")
    .option('--as <name>', 'the tenant made (with --replace: the tenant whose data is replaced)')
    .option('--cluster <name>', 'the Postgres cluster a new tenant goes on (default: the one with the most room by weight)')
    .option('--replace', "replace the tenant's data with the backup's (its settings and domains stay)", false)
    .action((file: string, o: { as?: string; cluster?: string; replace: boolean }) =>
      runCommand(quire, (rt) => tenantRestore(rt, file, { as: o.as, cluster: o.cluster, replace: o.replace, json })),
    );
  tenant
    .command('list')
    .description('every tenant with its hosts')
    .action(() => runCommand(quire, tenantList));
  tenant
    .command('drop <name>')
    .description('delete a tenant and all of its data')
    .option('--yes', 'confirm', false)
    .action((name: string, o: { yes: boolean }) => runCommand(quire, (rt) => tenantDrop(rt, name, o.yes)));
  tenant
    .command('suspend <name>')
    .description('answer every request of a tenant 503 (with --read-only: only its writes), in every process within a second')
    .option('--read-only', 'keep serving reads; writes are answered 503 InReadOnlyMode', false)
    .action((name: string, o: { readOnly: boolean }) => runCommand(quire, (rt) => tenantSuspend(rt, name, o.readOnly)));
  tenant
    .command('resume <name>')
    .description('serve a suspended or read-only tenant as usual again')
    .action((name: string) => runCommand(quire, (rt) => tenantResume(rt, name)));
  tenant
    .command('set <name>')
    .description("change a tenant's settings: its custom domains, its CORS origins, its public URL, its rate limit, its plan")
    .option('--allow-cors <origin>', 'an origin allowed with credentials (* for any, "" for none; repeatable)', collect)
    .option('--domain <host>', 'the custom domains, replacing the current ones ("" for none; repeatable)', collect)
    .option('--host-name <url>', 'the public URL links in emails point at, e.g. https://erp.acme.com ("" for the primary host)')
    .option(
      '--rate-limit <seconds/window>',
      "Frappe's site rate limit: seconds of request time per window, e.g. 60/3600, over its plan's (0/3600: its plan's again)",
    )
    .option('--plan <name>', 'its plan, one of QUIRE_PLANS ("" for the default plan)')
    .action((name: string, o: { allowCors?: string[]; domain?: string[]; hostName?: string; rateLimit?: string; plan?: string }) =>
      runCommand(quire, (rt) => tenantSet(rt, name, o)),
    );
  tenant
    .command('usage [names...]')
    .description('what tenants used (requests, request and database time: today, 30 days) and keep (database, files, users), against their plans')
    .option('--measure', 'measure what they keep now instead of showing the last measure', false)
    .action((names: string[], o: { measure: boolean }) => runCommand(quire, (rt) => tenantUsage(rt, names, o.measure)));

  quire
    .command('user')
    .description('users')
    .command('create')
    .description('a user, with roles and a login password')
    .requiredOption('--tenant <tenant>', 'the tenant')
    .requiredOption('--email <email>', 'the user (their email is their name)')
    .option('--password <password>', 'a login password')
    .option('--roles <roles>', 'comma-separated roles, e.g. "System Manager,Desk User"')
    .option('--first-name <name>', 'first name (default: the email before @)')
    .action((o: { tenant: string; email: string; password?: string; roles?: string; firstName?: string }) => runCommand(quire, (rt) => userCreate(rt, o)));

  quire
    .command('keys')
    .description('API keys')
    .command('generate')
    .description('a new API key and secret for a user (the secret is shown once)')
    .requiredOption('--tenant <tenant>', 'the tenant')
    .requiredOption('--user <user>', 'the user')
    .action((o: { tenant: string; user: string }) => runCommand(quire, (rt) => keysGenerate(rt, o.tenant, o.user)));

  quire
    .command('oauth-client')
    .description('OAuth clients (third-party apps)')
    .command('create')
    .description('register an app; a confidential client gets its secret once')
    .requiredOption('--tenant <tenant>', 'the tenant')
    .requiredOption('--app-name <name>', 'the name users see on the consent page')
    .option('--redirect-uri <uri>', 'a redirect URI (repeatable)', collect, [])
    .option('--public', 'a public client (no secret; PKCE required)', false)
    .option('--grant-type <type>', '"Authorization Code" (default) or "Client Credentials"')
    .option('--user <user>', 'the user a Client Credentials client acts as')
    .option('--scopes <scopes>', 'space-separated scopes (default "all openid")')
    .option('--roles <roles>', 'comma-separated roles allowed to sign in')
    .option('--skip-authorization', 'no consent page', false)
    .action((o: OAuthClientFlags) => runCommand(quire, (rt) => oauthClientCreate(rt, { ...o, redirectUris: o.redirectUri })));

  quire
    .command('oauth')
    .description('OAuth signing keys')
    .command('rotate-keys')
    .description('a new signing key; old ones verify until their tokens expire')
    .requiredOption('--tenant <tenant>', 'the tenant')
    .action((o: { tenant: string }) => runCommand(quire, (rt) => oauthRotateKeys(rt, o.tenant)));

  quire
    .command('ping')
    .description('check that an API answers (the chart\'s helm test): exit 0 on 200 {"message":"pong"}')
    .requiredOption('--url <url>', 'e.g. http://quire-api:8000/api/method/ping')
    .option('--host <host>', 'the Host header: a tenant host')
    .option('--timeout <ms>', 'give up after this long', (v) => Number(v), 10_000)
    .action(async (o: { url: string; host?: string; timeout: number }) => {
      print(await ping({ url: o.url, timeoutMs: o.timeout, ...(o.host ? { host: o.host } : {}) }), json);
    });

  quire
    .command('serve [service]')
    .description('run one service (api, webhooks, auth, operator), or api, webhooks and auth together (npm start)')
    .option('--dev', 'developer mode (QUIRE_DEVELOPER_MODE): error answers carry tracebacks', false)
    .action((service: string | undefined, o: { dev: boolean }) => serve(service, { dev: o.dev }));

  return quire;
}

interface OAuthClientFlags {
  tenant: string;
  appName: string;
  redirectUri: string[];
  public: boolean;
  grantType?: string;
  user?: string;
  scopes?: string;
  roles?: string;
  skipAuthorization: boolean;
}

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const quire = program(json);
  if (argv.filter((a) => !a.startsWith('-')).length === 0 && !argv.includes('--help') && !argv.includes('-h')) {
    process.stdout.write(quire.helpInformation());
    return 2;
  }
  try {
    await quire.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return 0;
      if (json) printError(new UsageError(e.message.replace(/^error: /, '')), true);
      return 2;
    }
    return printError(e, json);
  }
}
