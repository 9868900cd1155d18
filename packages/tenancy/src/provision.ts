import { generateKeys, type ApiCredentials } from '@quire/documents';
import { buildTenantMeta } from '@quire/meta';
import { ident, pgErrorInfo, PG, publishInvalidation } from '@quire/db';
import { DoesNotExistError, DuplicateEntryError, ValidationError } from '@quire/errors';
import { ADMINISTRATOR } from '@quire/permissions';
import { normalizeHost, type TenantConfig } from './directory';
import { installTenant } from './install';
import type { Platform } from './platform';
import { recordTenantRelease, releaseOf } from './release';

export const TENANT_NAME_RE = /^[a-z](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const DOMAIN_RE = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$|^localhost$/;

export function schemaOf(tenantName: string): string {
  return `t_${tenantName.replace(/-/g, '_')}`;
}

export interface CreateTenantInput {
  name: string;
  domains?: string[];
  adminPassword?: string | undefined;
}

export interface CreatedTenant extends ApiCredentials {
  name: string;
  schema: string;
  hosts: string[];
}

/** Registers a tenant, installs its schema, records it at this build's release and issues the Administrator's API key, all in one transaction. */
export async function createTenant(platform: Platform, input: CreateTenantInput): Promise<CreatedTenant> {
  const name = input.name.trim().toLowerCase();
  if (!TENANT_NAME_RE.test(name)) {
    throw new ValidationError(`Invalid tenant name ${JSON.stringify(input.name)}: lower-case letters, digits and hyphens, starting with a letter, at most 40`);
  }
  const domains = [...new Set((input.domains ?? []).map((d) => normalizeHost(d) ?? ''))];
  for (const d of domains) if (!DOMAIN_RE.test(d)) throw new ValidationError(`Invalid domain ${JSON.stringify(d)}`);
  const schema = schemaOf(name);
  const tenant = { name, schema };
  const { db, apps, changes } = platform;
  const credentials = await db.transaction(async (tx) => {
    try {
      await tx.query(`INSERT INTO quire.tenants ("name", "schema") VALUES ($1, $2)`, [name, schema]);
      if (domains.length) await tx.query(`INSERT INTO quire.tenant_domains ("domain", "tenant") SELECT unnest($1::text[]), $2`, [domains, name]);
    } catch (e) {
      const info = pgErrorInfo(e);
      if (info?.code === PG.uniqueViolation) {
        throw new DuplicateEntryError(
          info.table === 'tenant_domains' ? `A domain in ${domains.join(', ')} is already registered` : `Tenant ${name} already exists`,
        );
      }
      throw e;
    }
    await installTenant(tx, tenant, apps, platform, { adminPassword: input.adminPassword });
    // Installed from this build's definitions, so already at its release: `quire migrate` skips it.
    await recordTenantRelease(tx, name, releaseOf(apps));
    const keys = await generateKeys(tx, { tenant, meta: buildTenantMeta(schema, apps.doctypes), changes }, ADMINISTRATOR, ADMINISTRATOR);
    await publishInvalidation(tx, { topic: 'tenant', tenant: name });
    return keys;
  });
  await platform.tenants.refresh();
  return { name, schema, hosts: platform.tenants.hostsOf({ name, domains }), ...credentials };
}

/** Removes a tenant and everything in its schema. */
export async function dropTenant(platform: Platform, name: string): Promise<void> {
  const { db } = platform;
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ schema: string }>(`DELETE FROM quire.tenants WHERE "name" = $1 RETURNING "schema"`, [name]);
    const row = rows[0];
    if (!row) throw new DoesNotExistError(`Tenant ${name} not found`);
    await tx.query(`DROP SCHEMA IF EXISTS ${ident(row.schema)} CASCADE`);
    await publishInvalidation(tx, { topic: 'tenant', tenant: name });
  });
  await platform.tenants.refresh();
  platform.forget(name);
}

/** Changes a tenant's settings (e.g. `allow_cors`); every process picks them up at once. */
export async function updateTenantConfig(platform: Platform, name: string, patch: Partial<TenantConfig>): Promise<TenantConfig> {
  const config = await platform.db.transaction(async (tx) => {
    const { rows } = await tx.query<{ config: string }>(`UPDATE quire.tenants SET "config" = "config" || $2::jsonb WHERE "name" = $1 RETURNING "config"`, [
      name,
      JSON.stringify(patch),
    ]);
    if (!rows[0]) throw new DoesNotExistError(`Tenant ${name} not found`);
    await publishInvalidation(tx, { topic: 'tenant', tenant: name });
    return (typeof rows[0].config === 'string' ? JSON.parse(rows[0].config) : rows[0].config) as TenantConfig;
  });
  await platform.tenants.refresh();
  return config;
}
