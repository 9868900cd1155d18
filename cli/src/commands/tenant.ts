import { createTenant, dropTenant, updateTenantConfig } from '@quire/tenancy';
import type { CommandResult } from '../output';
import { UsageError } from '../output';
import type { Runtime } from '@quire/runtime';

export async function tenantCreate(rt: Runtime, name: string, domains: string[], adminPassword: string | undefined): Promise<CommandResult> {
  const t = await createTenant(rt.platform, { name, domains, adminPassword });
  return {
    json: { name: t.name, schema: t.schema, hosts: t.hosts, api_key: t.api_key, api_secret: t.api_secret },
    text: [
      `Created tenant ${t.name} (schema ${t.schema})`,
      `Hosts: ${t.hosts.join(', ')}`,
      `Administrator API key: ${t.api_key}`,
      `Administrator API secret: ${t.api_secret}   (shown once; only its hash is stored)`,
    ].join('\n'),
  };
}

export async function tenantList(rt: Runtime): Promise<CommandResult> {
  await rt.platform.tenants.refresh();
  const tenants = rt.platform.tenants.list().map((t) => ({ name: t.name, schema: t.schema, status: t.status, hosts: rt.platform.tenants.hostsOf(t) }));
  return {
    json: { tenants },
    text: tenants.length ? tenants.map((t) => `${t.name}\t${t.status}\t${t.hosts.join(', ')}`).join('\n') : 'No tenants yet.',
  };
}

export async function tenantDrop(rt: Runtime, name: string, yes: boolean): Promise<CommandResult> {
  if (!yes) throw new UsageError(`Dropping ${name} deletes all of its data; add --yes to confirm`);
  await dropTenant(rt.platform, name);
  return { json: { dropped: name }, text: `Dropped tenant ${name}` };
}

/** `tenant set <name> --allow-cors ORIGIN…`: the tenant's settings (`--allow-cors ""` clears the list). */
export async function tenantSet(rt: Runtime, name: string, allowCors: string[]): Promise<CommandResult> {
  const origins = allowCors.filter((o) => o !== '');
  const config = await updateTenantConfig(rt.platform, name, { allow_cors: origins });
  return { json: { name, config }, text: `Tenant ${name}: allow_cors = ${origins.length ? origins.join(', ') : '(none)'}` };
}
