import { randomBytes } from 'node:crypto';
import {
  createTenant,
  dropTenant,
  formatBytes,
  measureTenants,
  readUsage,
  setTenantDomains,
  setTenantStatus,
  updateTenantConfig,
  type CreateTenantInput,
  type TenantConfig,
} from '@quire/tenancy';
import type { CommandResult } from '../output';
import { UsageError } from '../output';
import type { Runtime } from '@quire/runtime';

export async function tenantCreate(
  rt: Runtime,
  name: string,
  options: Omit<CreateTenantInput, 'name'> & { plan?: string | undefined },
): Promise<CommandResult> {
  const { plan, ...input } = options;
  // An unknown plan is refused before anything is made.
  if (plan) rt.platform.plans.check(plan);
  // Without a password nobody can sign in to the new tenant's desk: a random one (144 bits), printed once as the API secret is.
  const generated = options.adminPassword ? undefined : randomBytes(18).toString('base64url');
  const t = await createTenant(rt.platform, { name, ...input, adminPassword: input.adminPassword || generated });
  if (plan) await updateTenantConfig(rt.platform, t.name, { plan });
  const made = rt.platform.tenants.get(t.name);
  const planName = made ? rt.platform.limitsOf(made).plan : plan;
  const text = [
    `Created tenant ${t.name} (schema ${t.schema} on cluster ${t.cluster})${planName ? `, plan ${planName}` : ''}`,
    `Hosts: ${t.hosts.join(', ')}`,
    `Administrator API key: ${t.api_key}`,
    `Administrator API secret: ${t.api_secret}   (shown once; only its hash is stored)`,
  ];
  // A password given on the command line is not echoed back.
  if (generated) text.push(`Administrator password: ${generated}   (shown once; only its hash is stored)`);
  return {
    json: {
      name: t.name,
      schema: t.schema,
      cluster: t.cluster,
      hosts: t.hosts,
      plan: planName ?? null,
      api_key: t.api_key,
      api_secret: t.api_secret,
      ...(generated && { admin_password: generated }),
    },
    text: text.join('\n'),
  };
}

export async function tenantList(rt: Runtime): Promise<CommandResult> {
  await rt.platform.tenants.refresh();
  const tenants = rt.platform.tenants.list().map((t) => ({
    name: t.name,
    schema: t.schema,
    status: t.status,
    cluster: t.cluster,
    plan: rt.platform.limitsOf(t).plan ?? null,
    hosts: rt.platform.tenants.hostsOf(t),
  }));
  return {
    json: { tenants },
    text: tenants.length ? tenants.map((t) => `${t.name}\t${t.status}\t${t.cluster}\t${t.plan ?? '-'}\t${t.hosts.join(', ')}`).join('\n') : 'No tenants yet.',
  };
}

export async function tenantDrop(rt: Runtime, name: string, yes: boolean): Promise<CommandResult> {
  if (!yes) throw new UsageError(`Dropping ${name} deletes all of its data; add --yes to confirm`);
  await dropTenant(rt.platform, name);
  return { json: { dropped: name }, text: `Dropped tenant ${name}` };
}

/** `tenant suspend <name> [--read-only]`: every request of the tenant 503, or its writes only. */
export async function tenantSuspend(rt: Runtime, name: string, readOnly: boolean): Promise<CommandResult> {
  const status = readOnly ? 'read_only' : 'suspended';
  await setTenantStatus(rt.platform, name, status);
  return {
    json: { name, status },
    text: readOnly ? `Tenant ${name} is read-only: reads are served, writes answered 503` : `Tenant ${name} is suspended: every request answered 503`,
  };
}

/** `tenant resume <name>`: served as usual again. */
export async function tenantResume(rt: Runtime, name: string): Promise<CommandResult> {
  await setTenantStatus(rt.platform, name, 'active');
  return { json: { name, status: 'active' }, text: `Tenant ${name} is active again` };
}

/** `tenant set <name> [--allow-cors ORIGIN…] [--domain HOST…] [--host-name URL] [--rate-limit S/W] [--plan NAME]`: the tenant's settings (`""` clears one). */
export async function tenantSet(
  rt: Runtime,
  name: string,
  options: {
    allowCors?: string[] | undefined;
    domain?: string[] | undefined;
    hostName?: string | undefined;
    rateLimit?: string | undefined;
    plan?: string | undefined;
  },
): Promise<CommandResult> {
  if (!options.allowCors && !options.domain && options.hostName === undefined && options.rateLimit === undefined && options.plan === undefined) {
    throw new UsageError('Nothing to set: give --allow-cors, --domain, --host-name, --rate-limit and/or --plan');
  }
  const text: string[] = [];
  const json: { name: string; config?: TenantConfig; domains?: string[] } = { name };
  if (options.domain) {
    json.domains = await setTenantDomains(
      rt.platform,
      name,
      options.domain.filter((d) => d !== ''),
    );
    text.push(`Tenant ${name}: domains = ${json.domains.length ? json.domains.join(', ') : '(none)'}`);
  }
  if (options.allowCors) {
    const origins = options.allowCors.filter((o) => o !== '');
    json.config = await updateTenantConfig(rt.platform, name, { allow_cors: origins });
    text.push(`Tenant ${name}: allow_cors = ${origins.length ? origins.join(', ') : '(none)'}`);
  }
  if (options.rateLimit !== undefined) {
    const limit = parseRateLimit(options.rateLimit);
    json.config = await updateTenantConfig(rt.platform, name, { rate_limit: limit });
    text.push(
      limit
        ? `Tenant ${name}: rate limit ${limit.limit} s of request time per ${limit.window} s (429 beyond, every API process counting)`
        : `Tenant ${name}: no rate limit`,
    );
  }
  if (options.plan !== undefined) {
    json.config = await updateTenantConfig(rt.platform, name, { plan: options.plan === '' ? null : options.plan });
    const tenant = rt.platform.tenants.get(name);
    const plan = tenant ? rt.platform.limitsOf(tenant).plan : undefined;
    text.push(`Tenant ${name}: plan ${plan ?? '(none: nothing limited)'}${options.plan === '' ? ' (the default)' : ''}`);
  }
  if (options.hostName !== undefined) {
    json.config = await updateTenantConfig(rt.platform, name, { host_name: options.hostName });
    const tenant = rt.platform.tenants.get(name);
    text.push(`Tenant ${name}: links in emails point at ${tenant ? rt.platform.siteUrl(tenant) : json.config.host_name}`);
  }
  return { json, text: text.join('\n') };
}

/** `<seconds>/<window>` (Frappe's rate_limit: seconds of request time per window); `0/…` lifts it (null). */
export function parseRateLimit(text: string): { limit: number; window: number } | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) throw new UsageError(`--rate-limit takes <seconds>/<window seconds>, e.g. 60/3600 (0/3600 lifts it), not ${JSON.stringify(text)}`);
  const limit = Number(m[1]);
  const window = Number(m[2]);
  return limit === 0 ? null : { limit, window };
}

/** `tenant usage [name…] [--measure]`: what tenants used today and over 30 days, what they keep, against their plans. */
export async function tenantUsage(rt: Runtime, names: readonly string[], measure: boolean): Promise<CommandResult> {
  await rt.platform.tenants.refresh();
  for (const n of names) if (!rt.platform.tenants.get(n)) throw new UsageError(`No tenant named ${n}`);
  if (measure) {
    const chosen = names.length ? names.map((n) => rt.platform.tenants.get(n)).filter((t) => t !== undefined) : rt.platform.tenants.list();
    await measureTenants(rt.platform.db, chosen, rt.platform.clusters);
  }
  const usage = await readUsage(rt.platform.db, names);
  const tenants = usage.map((u) => {
    const tenant = rt.platform.tenants.get(u.tenant);
    const limits = tenant ? rt.platform.limitsOf(tenant) : undefined;
    return {
      name: u.tenant,
      plan: limits?.plan ?? null,
      ...u,
      limits: {
        rateLimit: limits?.rateLimit ?? null,
        maxConnections: limits?.maxConnections ?? null,
        databaseBytes: limits?.databaseBytes ?? null,
        fileBytes: limits?.fileBytes ?? null,
        users: limits?.users ?? null,
        maxPageLength: limits?.maxPageLength ?? null,
        statementTimeoutMs: limits?.statementTimeoutMs ?? null,
      },
    };
  });
  const of = (used: number | null, limit: number | null, show: (n: number) => string): string =>
    used === null ? 'not measured yet' : limit === null ? show(used) : `${show(used)} of ${show(limit)}`;
  const text = tenants.map((t) =>
    [
      `${t.name} (plan ${t.plan ?? '-'})`,
      `  today ${t.today.day}: ${t.today.requests} requests, ${t.today.requestSeconds} s of request time, ${t.today.dbSeconds} s on the database`,
      `  last 30 days: ${t.last30Days.requests} requests, ${t.last30Days.requestSeconds} s, ${t.last30Days.dbSeconds} s on the database`,
      `  database ${of(t.databaseBytes, t.limits.databaseBytes, formatBytes)}; files ${of(t.fileBytes, t.limits.fileBytes, formatBytes)}; users ${of(t.users, t.limits.users, String)}${t.measuredAt ? ` (measured ${t.measuredAt})` : ''}`,
    ].join('\n'),
  );
  return { json: { tenants: tenants.map(({ tenant: _t, ...rest }) => rest) }, text: text.length ? text.join('\n') : 'No tenants yet.' };
}
