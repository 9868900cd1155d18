import { DoesNotExistError } from '@quire/errors';
import { ADMINISTRATOR, makePrincipal } from '@quire/permissions';
import type { Runtime } from '@quire/runtime';
import type { Tenant } from '@quire/tenancy';

/** Commands act as the Administrator: whoever runs the CLI owns the platform. */
export const ADMIN = makePrincipal(ADMINISTRATOR, ['Administrator', 'System Manager']);

export function tenantOf(rt: Runtime, name: string): Tenant {
  const tenant = rt.platform.tenants.get(name);
  if (!tenant) throw new DoesNotExistError(`Tenant ${name} not found`);
  return tenant;
}
