import type { Tenant } from '@quire/tenancy';
import type Provider from 'oidc-provider';
import type { AuthContext } from './context';
import { buildProvider } from './provider';

/** Providers per tenant and origin, built on first use and dropped when the tenant's keys change. */
export class ProviderRegistry {
  private readonly providers = new Map<string, Promise<Provider>>();

  constructor(private readonly ctx: AuthContext) {}

  get(tenant: Tenant, origin: string): Promise<Provider> {
    const key = `${tenant.name}\0${origin}`;
    let p = this.providers.get(key);
    if (!p) {
      p = buildProvider({ ...this.ctx, onError: (e) => this.ctx.logger.warn({ err: e }, 'oauth provider problem') }, tenant, origin);
      p.catch(() => this.providers.delete(key));
      this.providers.set(key, p);
    }
    return p;
  }

  /** Drops a tenant's providers (or every tenant's): they are rebuilt with its current keys on next use. */
  forget(tenant: string | undefined): void {
    for (const key of this.providers.keys()) if (tenant === undefined || key.startsWith(`${tenant}\0`)) this.providers.delete(key);
  }

  /** The tenants this process has served (for the active-grants gauge). */
  tenants(): string[] {
    return [...new Set([...this.providers.keys()].map((k) => k.split('\0')[0]!))];
  }
}
