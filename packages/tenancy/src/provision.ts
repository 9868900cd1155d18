import { generateKeys, type ApiCredentials } from '@quire/documents';
import { buildTenantMeta } from '@quire/meta';
import { ident, pgErrorInfo, PG, publishInvalidation, type Queryable, type Transaction } from '@quire/db';
import { DoesNotExistError, DuplicateEntryError, ValidationError } from '@quire/errors';
import { deleteTenantEvents } from '@quire/webhooks';
import { deleteTenantJobs, deleteTenantSchedules } from '@quire/jobs';
import { ADMINISTRATOR } from '@quire/permissions';
import type { SiteRateLimit } from '@quire/limits';
import { isHostHeader, normalizeHost, type TenantConfig, type TenantStatus } from './directory';
import { filePurgePending, recordFilePurge } from './file-purge';
import { installTenant, personalizeTenant } from './install';
import type { Platform } from './platform';
import { recordTenantRelease, releaseOf } from './release';
import { provisionFromTemplate } from './template';
import { clusterName, DEFAULT_CLUSTER, placeTenant } from './clusters';

export const TENANT_NAME_RE = /^[a-z](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const DOMAIN_RE = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$|^localhost$/;
const API_KEY_RE = /^[0-9a-f]{15}$/;
const API_SECRET_RE = /^[0-9a-f]{32,64}$/;

/** A tenant's name as stored (lower case), or a ValidationError saying what a name may be. */
export function tenantName(input: string): string {
  const name = input.trim().toLowerCase();
  if (!TENANT_NAME_RE.test(name)) {
    throw new ValidationError(`Invalid tenant name ${JSON.stringify(input)}: lower-case letters, digits and hyphens, starting with a letter, at most 40`);
  }
  return name;
}

/**
 * Custom domains as stored: normalized, distinct, valid host names, and never `<BASE_DOMAIN>` or
 * a host under it (those are tenants' own hosts: a custom domain there would capture another tenant's).
 */
export function customDomains(platform: Pick<Platform, 'baseDomain'>, input: readonly string[]): string[] {
  const base = platform.baseDomain.toLowerCase();
  const domains = [...new Set(input.map((d) => normalizeHost(d) ?? ''))];
  for (const d of domains) {
    if (!DOMAIN_RE.test(d)) throw new ValidationError(`Invalid domain ${JSON.stringify(d)}`);
    if (d === base || d.endsWith(`.${base}`)) throw new ValidationError(`Domain ${d} is under BASE_DOMAIN ${base}: tenants are served there by name`);
  }
  return domains.sort();
}

/** A DuplicateEntryError naming the tenant each of `domains` is registered for (other than `except`). */
async function domainTaken(q: Queryable, domains: readonly string[], except?: string): Promise<Error | undefined> {
  const { rows } = await q.query<{ domain: string; tenant: string }>(
    `SELECT "domain", "tenant" FROM quire.tenant_domains WHERE "domain" = ANY($1::text[]) AND "tenant" IS DISTINCT FROM $2 ORDER BY "domain"`,
    [domains, except ?? null],
  );
  return rows.length ? new DuplicateEntryError(`Already registered: ${rows.map((r) => `${r.domain} (tenant ${r.tenant})`).join(', ')}`) : undefined;
}

export function schemaOf(tenantName: string): string {
  return `t_${tenantName.replace(/-/g, '_')}`;
}

export interface CreateTenantInput {
  name: string;
  domains?: readonly string[];
  adminPassword?: string | undefined;
  /** The Administrator's email (default admin@example.com, as in Frappe). */
  adminEmail?: string | undefined;
  /** The Administrator's API key pair, when issued by the caller (else generated here). */
  adminCredentials?: ApiCredentials | undefined;
  /** The cluster its schema goes on (not a draining one); by default the one with the most room (placeTenant). */
  cluster?: string | undefined;
}

export interface CreatedTenant extends ApiCredentials {
  name: string;
  schema: string;
  hosts: string[];
  cluster: string;
}

/** The cluster a new tenant is asked to go on, if it may: registered and not draining. */
export async function chosenCluster(q: Queryable, input: string): Promise<string> {
  const name = clusterName(input);
  const { rows } = await q.query<{ state: string }>(`SELECT "state" FROM quire.clusters WHERE "name" = $1`, [name]);
  const row = rows[0];
  if (!row) throw new DoesNotExistError(`Cluster ${name} not found (quire cluster list)`);
  if (row.state !== 'active') throw new ValidationError(`Cluster ${name} is draining: no new tenant goes there`, { title: 'Cluster Draining' });
  return name;
}

/**
 * Registers a tenant, installs its schema (a spare made ahead, else a copy of the release's
 * template), records it at this build's release and issues the Administrator's API key, all in one
 * transaction.
 */
export async function createTenant(platform: Platform, input: CreateTenantInput): Promise<CreatedTenant> {
  const name = tenantName(input.name);
  const domains = customDomains(platform, input.domains ?? []);
  const preset = input.adminCredentials;
  if (preset && !(API_KEY_RE.test(preset.api_key) && API_SECRET_RE.test(preset.api_secret))) {
    throw new ValidationError('Invalid Administrator credentials: api_key is 15 and api_secret 32 to 64 lower-case hex characters');
  }
  const schema = schemaOf(name);
  const tenant = { name, schema };
  const { db } = platform;
  const cluster = input.cluster === undefined ? await placeTenant(db) : await chosenCluster(db, input.cluster);
  const personal = { adminPassword: input.adminPassword, adminEmail: input.adminEmail };
  const onPlatform = cluster === DEFAULT_CLUSTER;
  // Read before the transactions: building a release's first template takes a while, and a transaction of its own.
  const plan = await platform.templatesOn(cluster).get(platform);
  let installed = false;
  const credentials = await db
    .transaction(async (tx) => {
      const taken = domains.length ? await domainTaken(tx, domains, name) : undefined;
      if (taken) throw taken;
      try {
        await tx.query(`INSERT INTO quire.tenants ("name", "schema", "cluster") VALUES ($1, $2, $3)`, [name, schema, cluster]);
        if (domains.length) await tx.query(`INSERT INTO quire.tenant_domains ("domain", "tenant") SELECT unnest($1::text[]), $2`, [domains, name]);
      } catch (e) {
        const info = pgErrorInfo(e);
        if (info?.code === PG.uniqueViolation) {
          throw new DuplicateEntryError(
            info.table === 'tenant_domains' ? `A domain in ${domains.join(', ')} was just registered for another tenant` : `Tenant ${name} already exists`,
          );
        }
        throw e;
      }
      // The name is ours now; files a dropped tenant of the same name left must not become this one's.
      if (await filePurgePending(tx, schema)) {
        throw new ValidationError(`Tenant ${name} was dropped a moment ago and its files are still being removed: try again in a minute`, {
          title: 'Tenant Being Removed',
        });
      }
      let keys: ApiCredentials;
      if (onPlatform) {
        keys = await installSchema(tx, platform, cluster, tenant, personal, preset, plan);
      } else {
        // Its schema on its cluster, committed there just before this transaction (holding the name) commits.
        keys = await platform.clusters.database(cluster).transaction(async (ctx) => {
          // A schema left by a create that died between its two commits: no tenant holds it (this transaction has the name).
          await ctx.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
          return installSchema(ctx, platform, cluster, tenant, personal, preset, plan);
        });
        installed = true;
      }
      // Installed from this build's definitions, so already at its release: `quire migrate` skips it.
      await recordTenantRelease(tx, name, releaseOf(platform.apps));
      await publishInvalidation(tx, { topic: 'tenant', tenant: name });
      return keys;
    })
    .catch(async (e: unknown) => {
      // Its schema committed on its cluster but the tenant was not registered: not left behind.
      if (installed)
        await platform.clusters
          .database(cluster)
          .query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`)
          .catch(() => {});
      throw e;
    });
  // The next tenant takes a spare made now (in the background: this one is ready).
  if (onPlatform) platform.spares.replenish(platform);
  await platform.tenants.refreshOne(name);
  return { name, schema, cluster, hosts: platform.tenants.hostsOf({ name, domains }), ...credentials };
}

/**
 * A new tenant's schema in `tx` (on its cluster): a spare made ahead (the platform's own cluster),
 * else a copy of the release's template, else installed the long way; then personalized, with the
 * Administrator's API key.
 */
async function installSchema(
  tx: Transaction,
  platform: Platform,
  cluster: string,
  tenant: { name: string; schema: string },
  personal: { adminPassword: string | undefined; adminEmail: string | undefined },
  preset: ApiCredentials | undefined,
  plan: Awaited<ReturnType<Platform['templates']['get']>>,
): Promise<ApiCredentials> {
  const { apps, changes } = platform;
  const spare = cluster === DEFAULT_CLUSTER && plan ? await platform.spares.claim(tx, plan, tenant) : false;
  if (plan && (spare || (await provisionFromTemplate(tx, plan, tenant)))) {
    await personalizeTenant(tx, tenant, apps, platform, personal);
  } else {
    // No template for this release (dropped by a newer release's migrate): the long way, and build it again next time.
    if (plan) platform.templatesOn(cluster).reset();
    await installTenant(tx, tenant, apps, platform, personal);
  }
  return generateKeys(tx, { tenant, meta: buildTenantMeta(tenant.schema, apps.doctypes, apps.ownerFields), changes }, ADMINISTRATOR, ADMINISTRATOR, preset);
}

/**
 * Removes a tenant and all of its data: its schema and its undelivered webhook events at once, its
 * uploaded files right after (file-purge.ts: by this process when it holds the file store, else by
 * the API processes, within a minute).
 */
export async function dropTenant(platform: Platform, name: string): Promise<void> {
  const { db } = platform;
  const dropped = await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ schema: string; cluster: string }>(`DELETE FROM quire.tenants WHERE "name" = $1 RETURNING "schema", "cluster"`, [name]);
    const row = rows[0];
    if (!row) throw new DoesNotExistError(`Tenant ${name} not found`);
    if (row.cluster === DEFAULT_CLUSTER) await dropSchemaAndEvents(tx, name, row.schema);
    await recordFilePurge(tx, row.schema);
    await publishInvalidation(tx, { topic: 'tenant', tenant: name });
    return row;
  });
  // On another cluster, once no process serves it any more (a failure here leaves a schema no tenant
  // has, dropped by the next create of that name there, never a tenant without its schema).
  if (dropped.cluster !== DEFAULT_CLUSTER) {
    await platform.clusters.database(dropped.cluster).transaction((tx) => dropSchemaAndEvents(tx, name, dropped.schema));
  }
  await platform.tenants.refreshOne(name);
  platform.forget(name);
  await platform.purgeDroppedFiles();
}

async function dropSchemaAndEvents(tx: Transaction, name: string, schema: string): Promise<void> {
  await tx.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
  // After the schema: a write that raised an event committed before the DROP could take its locks.
  await deleteTenantEvents(tx, name);
  await deleteTenantJobs(tx, name);
  await deleteTenantSchedules(tx, name);
}

/**
 * Makes `domains` the tenant's custom domains (added and removed in one transaction); every process
 * resolves them at once. A domain registered for another tenant is a DuplicateEntryError naming it.
 */
export async function setTenantDomains(platform: Platform, name: string, domains: readonly string[]): Promise<string[]> {
  const wanted = customDomains(platform, domains);
  await platform.db.transaction(async (tx) => {
    const { rows } = await tx.query(`SELECT 1 FROM quire.tenants WHERE "name" = $1 FOR UPDATE`, [name]);
    if (!rows[0]) throw new DoesNotExistError(`Tenant ${name} not found`);
    const taken = await domainTaken(tx, wanted, name);
    if (taken) throw taken;
    await tx.query(`DELETE FROM quire.tenant_domains WHERE "tenant" = $1 AND NOT ("domain" = ANY($2::text[]))`, [name, wanted]);
    try {
      await tx.query(
        `INSERT INTO quire.tenant_domains ("domain", "tenant")
         SELECT d, $2 FROM unnest($1::text[]) AS d WHERE d NOT IN (SELECT "domain" FROM quire.tenant_domains WHERE "tenant" = $2)`,
        [wanted, name],
      );
    } catch (e) {
      // Another tenant registered one of them since the check above.
      if (pgErrorInfo(e)?.code === PG.uniqueViolation) throw new DuplicateEntryError(`A domain in ${wanted.join(', ')} was just registered for another tenant`);
      throw e;
    }
    await publishInvalidation(tx, { topic: 'tenant', tenant: name });
  });
  await platform.tenants.refreshOne(name);
  return wanted;
}

/** Changes a tenant's settings (e.g. `allow_cors`); every process picks them up at once. */
export async function updateTenantConfig(platform: Platform, name: string, patch: TenantConfigPatch): Promise<TenantConfig> {
  if (patch.host_name !== undefined && patch.host_name !== null && patch.host_name !== '') patch = { ...patch, host_name: publicOrigin(patch.host_name) };
  if (patch.rate_limit) checkRateLimit(patch.rate_limit);
  if (patch.plan) platform.plans.check(patch.plan);
  const config = await platform.db.transaction(async (tx) => {
    // A key patched to null is removed.
    const { rows } = await tx.query<{ config: string }>(
      `UPDATE quire.tenants SET "config" = jsonb_strip_nulls("config" || $2::jsonb) WHERE "name" = $1 RETURNING "config"`,
      [name, JSON.stringify(patch)],
    );
    if (!rows[0]) throw new DoesNotExistError(`Tenant ${name} not found`);
    await publishInvalidation(tx, { topic: 'tenant', tenant: name });
    return (typeof rows[0].config === 'string' ? JSON.parse(rows[0].config) : rows[0].config) as TenantConfig;
  });
  await platform.tenants.refreshOne(name);
  return config;
}

/**
 * Suspends a tenant (every request 503), makes it read-only (writes 503), or makes it active again;
 * every process follows within a second (the tenant's notification, else the periodic re-read).
 */
export async function setTenantStatus(platform: Platform, name: string, status: TenantStatus): Promise<void> {
  await platform.db.transaction(async (tx) => {
    const { rows } = await tx.query(`UPDATE quire.tenants SET "status" = $2 WHERE "name" = $1 RETURNING 1`, [name, status]);
    if (!rows[0]) throw new DoesNotExistError(`Tenant ${name} not found`);
    await publishInvalidation(tx, { topic: 'tenant', tenant: name });
  });
  await platform.tenants.refreshOne(name);
}

/** Changes to a tenant's settings: a key given null is removed. */
export type TenantConfigPatch = { [K in keyof TenantConfig]?: TenantConfig[K] | null };

function checkRateLimit(r: SiteRateLimit): void {
  if (!(Number.isFinite(r.limit) && r.limit > 0 && Number.isFinite(r.window) && r.window >= 1 && r.window <= 86_400 * 31)) {
    throw new ValidationError('rate_limit needs a limit above 0 seconds per a window of 1 second to 31 days');
  }
}

/**
 * A tenant's `host_name`: an http(s) origin (scheme, host, optional port; no user, path, query or
 * fragment), lower-cased and without a trailing slash. Anything else is a ValidationError.
 */
export function publicOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ValidationError(`host_name must be a URL like https://erp.example.com, not ${JSON.stringify(value)}`);
  }
  const bare = url.username === '' && url.password === '' && (url.pathname === '/' || url.pathname === '') && url.search === '' && url.hash === '';
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !bare || !isHostHeader(url.host)) {
    throw new ValidationError(`host_name must be an http(s) origin like https://erp.example.com (no path), not ${JSON.stringify(value)}`);
  }
  return url.origin;
}
