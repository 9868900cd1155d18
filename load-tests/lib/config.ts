// What a run targets, read from k6's environment (`-e NAME=value`, or the shell's variables).
// Pure functions: the entry scripts pass `__ENV` and k6's `open`, so the Node runner and the tests
// call them too.

/** One tenant as `quire tenant create --json` prints it, plus what `quire oauth-client create --json` adds. */
export interface TenantEntry {
  name: string;
  /** The tenant's hosts (`<name>.<BASE_DOMAIN>` first); the first is sent as `Host`. */
  hosts: string[];
  /** The Administrator's API key and secret: setup() uses them to make the load user and the OAuth client. */
  api_key: string;
  api_secret: string;
}

export interface LoadConfig {
  /** Origins to send API requests to, round-robin; `{tenant}` in one is replaced by the tenant's name. */
  bases: string[];
  /** Origins for `/oauth/token` (default: `bases`). */
  authBases: string[];
  /** How a request names its tenant when the origin does not: its `Host` (default), or `X-Frappe-Site-Name`. */
  tenantHeader: 'host' | 'site';
  tenants: TenantEntry[];
  /** ToDos each tenant must have before the run (setup() inserts the missing ones). */
  seedTodos: number;
  /** ToDos the fairness script's flooding tenant must have: enough that its heavy list is heavy. */
  floodTodos: number;
  /** The user every request runs as (a System Manager that setup() creates in each tenant). */
  loadUser: string;
  /** The writes scenario deletes each ToDo it created (default) or keeps it (WRITE_CLEANUP=0). */
  writeCleanup: boolean;
  /** Where handleSummary writes the JSON summary (SUMMARY_JSON; default $TMPDIR/quire-load-<script>-<profile>.json). */
  summaryJson: string;
  script: string;
  profile: string;
}

type Env = Record<string, string | undefined>;

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a tenants file: a JSON array, or JSON lines (one command output per line). Entries are
 * merged by tenant (`name`, or `tenant` in the output of `oauth-client create` / `keys generate`),
 * in the order tenants first appear; a line of another shape is an error.
 */
export function parseTenants(text: string): TenantEntry[] {
  const trimmed = text.trim();
  const items: unknown[] = trimmed.startsWith('[')
    ? (JSON.parse(trimmed) as unknown[])
    : trimmed
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => JSON.parse(l) as unknown);
  const byName = new Map<string, Record<string, unknown>>();
  for (const item of items) {
    if (!isRecord(item)) throw new Error(`tenants file: not an object: ${JSON.stringify(item)}`);
    const name = typeof item.name === 'string' && Array.isArray(item.hosts) ? item.name : item.tenant;
    if (typeof name !== 'string' || name === '') throw new Error(`tenants file: an entry names no tenant: ${JSON.stringify(item)}`);
    byName.set(name, { ...byName.get(name), ...item, name });
  }
  return [...byName.values()].map((e) => {
    const hosts = Array.isArray(e.hosts) ? e.hosts.filter((h): h is string => typeof h === 'string') : [];
    if (typeof e.api_key !== 'string' || typeof e.api_secret !== 'string') {
      throw new Error(`tenants file: tenant ${String(e.name)} has no api_key/api_secret (use the output of \`quire tenant create --json\`)`);
    }
    return { name: String(e.name), hosts, api_key: e.api_key, api_secret: e.api_secret };
  });
}

/**
 * The run's settings. `readFile` is k6's `open` (init context only) or, in tests, a stand-in; a
 * relative TENANTS_FILE is taken from the shell's working directory (`PWD`), as one would expect,
 * rather than from the script's folder as k6's open() would.
 */
export function loadConfig(script: string, env: Env, readFile: (path: string) => string): LoadConfig {
  const bases = list(env.BASE).map((b) => b.replace(/\/+$/, ''));
  if (bases.length === 0) throw new Error('BASE is required: the origin of the deployment, e.g. -e BASE=https://{tenant}.quire.example.com');
  const file = env.TENANTS_FILE;
  if (!file) throw new Error('TENANTS_FILE is required: JSON lines of `quire tenant create <name> --json` outputs (see load-tests/README.md)');
  const path = file.startsWith('/') || !env.PWD ? file : `${env.PWD}/${file}`;
  let tenants = parseTenants(readFile(path));
  const only = list(env.TENANTS);
  if (only.length) {
    tenants = only.map((name) => {
      const t = tenants.find((x) => x.name === name);
      if (!t) throw new Error(`TENANTS names ${name}, which ${file} does not have`);
      return t;
    });
  }
  const count = Number(env.TENANT_COUNT ?? '');
  if (Number.isInteger(count) && count > 0) tenants = tenants.slice(0, count);
  if (tenants.length === 0) throw new Error(`${file} lists no tenants`);
  const profile = env.PROFILE || 'smoke';
  const seedTodos = Number(env.SEED_TODOS ?? '');
  const floodTodos = Number(env.FLOOD_TODOS ?? '');
  return {
    bases,
    authBases: list(env.AUTH_BASE).map((b) => b.replace(/\/+$/, '')),
    tenantHeader: env.TENANT_HEADER === 'site' ? 'site' : 'host',
    tenants,
    seedTodos: Number.isInteger(seedTodos) && seedTodos > 0 ? seedTodos : 200,
    // The bench's flood (bench/fairness.ts) lists over 30,000 ToDos.
    floodTodos: Number.isInteger(floodTodos) && floodTodos > 0 ? floodTodos : 30_000,
    loadUser: env.LOAD_USER || 'k6-load@example.com',
    writeCleanup: env.WRITE_CLEANUP !== '0',
    // Outside the checkout by default (k6 does not make folders; the repository's lint would read it).
    summaryJson: env.SUMMARY_JSON || `${(env.TMPDIR || '/tmp').replace(/\/+$/, '')}/quire-load-${script}-${profile}.json`,
    script,
    profile,
  };
}
