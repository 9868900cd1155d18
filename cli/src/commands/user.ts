import { generateKeys, insertDoc, serializeDoc } from '@quire/documents';
import { ADMINISTRATOR } from '@quire/permissions';
import type { Runtime } from '@quire/runtime';
import type { CommandResult } from '../output';
import { demoCredentialsFile, isDemoAdministrator, readDemoCredentials, writeDemoCredentials } from './demo';
import { ADMIN, tenantOf } from './shared';

export interface UserCreateOptions {
  tenant: string;
  email: string;
  password?: string | undefined;
  roles?: string | undefined;
  firstName?: string | undefined;
}

export async function userCreate(rt: Runtime, o: UserCreateOptions): Promise<CommandResult> {
  const tenant = tenantOf(rt, o.tenant);
  const roles = (o.roles ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
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

export async function keysGenerate(rt: Runtime, tenantName: string, user: string): Promise<CommandResult> {
  const tenant = tenantOf(rt, tenantName);
  const ctx = await rt.platform.context(tenant, ADMIN);
  const keys = await rt.platform.dbOf(tenant).transaction((tx) => generateKeys(tx, ctx, user, ADMINISTRATOR));
  const text = [`API key: ${keys.api_key}`, `API secret: ${keys.api_secret}   (shown once; only its hash is stored)`];
  // The demo's Administrator: the credentials file `npm start` prints its curl line from follows.
  const demo = isDemoAdministrator(rt, tenant.name, user) ? readDemoCredentials(rt) : undefined;
  if (demo) {
    writeDemoCredentials(rt, { ...demo, api_key: keys.api_key, api_secret: keys.api_secret });
    text.push(`(${demoCredentialsFile(rt)} updated)`);
  }
  return { json: { tenant: tenant.name, user, api_key: keys.api_key, api_secret: keys.api_secret }, text: text.join('\n') };
}
