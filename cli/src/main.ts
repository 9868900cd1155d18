import { parseArgs } from 'node:util';
import { loadPlatformConfig } from '@quire/config';
import { migrate } from './commands/migrate';
import { oauthClientCreate, oauthRotateKeys } from './commands/oauth';
import { serve } from './commands/serve';
import { tenantCreate, tenantDrop, tenantList, tenantSet } from './commands/tenant';
import { keysGenerate, userCreate } from './commands/user';
import { print, printError, UsageError, type CommandResult } from './output';
import { openRuntime, type Runtime } from './runtime';

const USAGE = `usage: quire <command> [options] [--json]

  migrate                                   migrate the platform and every tenant (idempotent)
  tenant create <name> [--domain HOST]... [--admin-password P]
  tenant list
  tenant drop <name> --yes
  tenant set <name> --allow-cors ORIGIN...   CORS origins allowed with credentials (* for any)
  user create --tenant T --email E [--password P] [--roles "R1,R2"] [--first-name N]
  keys generate --tenant T --user U
  oauth-client create --tenant T --app-name NAME (--redirect-uri URI... [--public] | --grant-type "Client Credentials" --user U)
                      [--scopes "all openid"] [--roles "R1,R2"] [--skip-authorization]
  oauth rotate-keys --tenant T              a new signing key; old ones verify until their tokens expire
  serve [api|webhooks|auth]                 run one service, or all of them (npm start)

Environment: DATABASE_URL (else an embedded database in QUIRE_DATA_DIR), PORT, BASE_DOMAIN, DEFAULT_TENANT.`;

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      domain: { type: 'string', multiple: true, default: [] },
      'admin-password': { type: 'string' },
      'allow-cors': { type: 'string', multiple: true },
      tenant: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      roles: { type: 'string' },
      'first-name': { type: 'string' },
      user: { type: 'string' },
      'app-name': { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true, default: [] },
      public: { type: 'boolean', default: false },
      'grant-type': { type: 'string' },
      scopes: { type: 'string' },
      'skip-authorization': { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

async function withRuntime(fn: (rt: Runtime) => Promise<CommandResult>): Promise<CommandResult> {
  const rt = await openRuntime(loadPlatformConfig(), 'quire-cli');
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  let json = argv.includes('--json');
  try {
    const { values: o, positionals } = parse(argv);
    json = o.json;
    const [command, sub, arg] = positionals;
    if (o.help || !command) {
      process.stdout.write(`${USAGE}\n`);
      return command || o.help ? 0 : 2;
    }
    if (command === 'serve') {
      await serve(sub);
      return 0;
    }
    const key = ['tenant', 'user', 'keys', 'oauth-client', 'oauth'].includes(command) ? `${command} ${sub ?? ''}` : command;
    const run: Record<string, (rt: Runtime) => Promise<CommandResult>> = {
      migrate: (rt) => migrate(rt),
      'tenant create': (rt) => tenantCreate(rt, arg, o.domain ?? [], o['admin-password']),
      'tenant list': (rt) => tenantList(rt),
      'tenant drop': (rt) => tenantDrop(rt, arg, o.yes ?? false),
      'tenant set': (rt) => tenantSet(rt, arg, o['allow-cors']),
      'user create': (rt) => userCreate(rt, { tenant: o.tenant, email: o.email, password: o.password, roles: o.roles, firstName: o['first-name'] }),
      'keys generate': (rt) => keysGenerate(rt, o.tenant, o.user),
      'oauth-client create': (rt) =>
        oauthClientCreate(rt, {
          tenant: o.tenant,
          appName: o['app-name'],
          redirectUris: o['redirect-uri'] ?? [],
          public: o.public ?? false,
          grantType: o['grant-type'],
          user: o.user,
          scopes: o.scopes,
          skipAuthorization: o['skip-authorization'] ?? false,
          roles: o.roles,
        }),
      'oauth rotate-keys': (rt) => oauthRotateKeys(rt, o.tenant),
    };
    const handler = run[key];
    if (!handler) throw new UsageError(`unknown command: ${key.trim()}\n\n${USAGE}`);
    print(await withRuntime(handler), json);
    return 0;
  } catch (e) {
    return printError(e, json);
  }
}
