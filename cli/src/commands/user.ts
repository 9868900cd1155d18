import { generateKeys } from '@quire/auth';
import { insertDoc, serializeDoc } from '@quire/documents';
import { DoesNotExistError } from '@quire/errors';
import { ADMINISTRATOR, makePrincipal } from '@quire/permissions';
import type { Tenant } from '@quire/tenancy';
import type { CommandResult } from '../output';
import { UsageError } from '../output';
import type { Runtime } from '../runtime';

const ADMIN = makePrincipal(ADMINISTRATOR, ['Administrator', 'System Manager']);

function tenantOf(rt: Runtime, name: string | undefined): Tenant {
  if (!name) throw new UsageError('--tenant is required');
  const tenant = rt.platform.tenants.get(name);
  if (!tenant) throw new DoesNotExistError(`Tenant ${name} not found`);
  return tenant;
}

export interface UserCreateOptions {
  tenant: string | undefined;
  email: string | undefined;
  password: string | undefined;
  roles: string | undefined;
  firstName: string | undefined;
}

export async function userCreate(rt: Runtime, o: UserCreateOptions): Promise<CommandResult> {
  const tenant = tenantOf(rt, o.tenant);
  if (!o.email) throw new UsageError('usage: quire user create --tenant T --email E [--password P] [--roles "R1,R2"] [--json]');
  const roles = (o.roles ?? '').split(',').map((r) => r.trim()).filter(Boolean);
  const ctx = await rt.platform.context(tenant, ADMIN);
  const doc = await insertDoc(ctx, 'User', {
    email: o.email,
    first_name: o.firstName ?? o.email.split('@')[0],
    roles: roles.map((role) => ({ role })),
    ...(o.password ? { new_password: o.password } : {}),
  });
  const user = serializeDoc(ctx.meta, ctx.meta.require('User'), doc, { includeNulls: false });
  return {
    json: { tenant: tenant.name, name: user.name, email: user.email, roles },
    text: `Created user ${String(user.name)} in ${tenant.name}${roles.length ? ` with roles ${roles.join(', ')}` : ''}`,
  };
}

export async function keysGenerate(rt: Runtime, tenantName: string | undefined, user: string | undefined): Promise<CommandResult> {
  const tenant = tenantOf(rt, tenantName);
  if (!user) throw new UsageError('usage: quire keys generate --tenant T --user U [--json]');
  const keys = await rt.db.transaction((tx) => generateKeys(tx, tenant, user, ADMINISTRATOR, rt.platform.changes));
  return {
    json: { tenant: tenant.name, user, api_key: keys.api_key, api_secret: keys.api_secret },
    text: `API key: ${keys.api_key}\nAPI secret: ${keys.api_secret}   (shown once; only its hash is stored)`,
  };
}
