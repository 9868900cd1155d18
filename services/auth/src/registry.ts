import type { Tenant } from '@quire/tenancy';
import { LRUCache } from 'lru-cache';
import type Provider from 'oidc-provider';
import type { AuthContext } from './context';
import { buildProvider } from './provider';

/** Providers kept per process (by tenant and origin); one dropped is built again on its next use. */
const MAX_PROVIDERS = 1_000;

/** The tenant part of a provider's key (`tenant\0origin`). */
function tenantOfKey(key: string): string {
  const end = key.indexOf('\0');
  return end < 0 ? key : key.slice(0, end);
}

/**
 * Providers per tenant and origin, built on first use and dropped when the tenant's keys change
 * (or, beyond MAX_PROVIDERS, the least recently used). Dropping one loses nothing: the provider's
 * state is in the tenant's tables and its cookies are signed with keys every process shares.
 */
export class ProviderRegistry {
  private readonly providers = new LRUCache<string, Promise<Provider>>({ max: MAX_PROVIDERS });

  constructor(private readonly ctx: AuthContext) {}

  get(tenant: Tenant, origin: string): Promise<Provider> {
    const key = `${tenant.name}\0${origin}`;
    let p = this.providers.get(key);
    if (!p) {
      const building = buildProvider({ ...this.ctx, onError: (e) => this.ctx.logger.warn({ err: e }, 'oauth provider problem') }, tenant, origin);
      // Only this build: a newer one (after forget) stays.
      building.catch(() => {
        if (this.providers.peek(key) === building) this.providers.delete(key);
      });
      this.providers.set(key, building);
      p = building;
    }
    return p;
  }

  /** Drops a tenant's providers (or every tenant's): they are rebuilt with its current keys on next use. */
  forget(tenant: string | undefined): void {
    if (tenant === undefined) {
      this.providers.clear();
      return;
    }
    // Collected first, as deleting while LRUCache iterates is not safe.
    const doomed = [...this.providers.keys()].filter((key) => key.startsWith(`${tenant}\0`));
    for (const key of doomed) this.providers.delete(key);
  }

  /** The tenants this process has served recently (for the active-grants gauge and the purge). */
  tenants(): string[] {
    return [...new Set([...this.providers.keys()].map(tenantOfKey))];
  }
}
