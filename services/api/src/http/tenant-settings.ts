import type { MethodSettings } from '@quire/apps';
import type { Platform, Tenant } from '@quire/tenancy';

/**
 * The process's method settings as one tenant gets them: its plan's `maxPageLength` when smaller
 * than the process's. Worked out once per version of the tenant (a plan change makes a new one).
 */
export class TenantSettings {
  private readonly perTenant = new WeakMap<Tenant, MethodSettings>();

  constructor(
    private readonly platform: Pick<Platform, 'limitsOf'>,
    private readonly base: MethodSettings,
  ) {}

  of(tenant: Tenant): MethodSettings {
    let settings = this.perTenant.get(tenant);
    if (!settings) {
      const planned = this.platform.limitsOf(tenant).maxPageLength;
      settings = planned !== undefined && planned < this.base.maxPageLength ? { ...this.base, maxPageLength: planned } : this.base;
      this.perTenant.set(tenant, settings);
    }
    return settings;
  }
}
