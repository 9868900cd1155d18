import type { Plan, PlanCatalog } from '@quire/config';
import type { SiteRateLimit } from '@quire/limits';
import { ValidationError } from '@quire/errors';
import type { Tenant } from './directory';

/** What one tenant may use: its plan's limits, with its own settings over them. */
export interface TenantLimits {
  /** The plan these come from (its own, else the default); undefined without one. */
  readonly plan: string | undefined;
  /** Frappe's site rate limit: the tenant's `rate_limit`, else its plan's. */
  readonly rateLimit: SiteRateLimit | undefined;
  readonly maxConnections: number | undefined;
  readonly databaseBytes: number | undefined;
  readonly fileBytes: number | undefined;
  readonly users: number | undefined;
  readonly maxPageLength: number | undefined;
  readonly statementTimeoutMs: number | undefined;
}

const NO_PLAN: Plan = {};

/**
 * The operator's plans (QUIRE_PLANS) applied to tenants. A tenant's limits are worked out once per
 * version of it the directory holds (a settings change makes a new one), so a request pays a
 * WeakMap lookup.
 */
export class TenantPlans {
  private readonly resolved = new WeakMap<Tenant, TenantLimits>();

  constructor(readonly catalog: PlanCatalog = { plans: {} }) {}

  /** The plan names, the default first. */
  names(): string[] {
    const names = Object.keys(this.catalog.plans).sort();
    const fallback = this.catalog.default;
    return fallback ? [fallback, ...names.filter((n) => n !== fallback)] : names;
  }

  /** A plan name as `quire tenant set --plan` takes it: one of the catalog's (ValidationError otherwise). */
  check(name: string): string {
    if (name in this.catalog.plans) return name;
    const known = this.names();
    throw new ValidationError(
      known.length
        ? `No plan named ${JSON.stringify(name)}: the plans are ${known.join(', ')} (QUIRE_PLANS)`
        : `No plan named ${JSON.stringify(name)}: no plans are defined (QUIRE_PLANS, the chart's plans values)`,
    );
  }

  of(tenant: Tenant): TenantLimits {
    let limits = this.resolved.get(tenant);
    if (!limits) this.resolved.set(tenant, (limits = this.resolve(tenant)));
    return limits;
  }

  private resolve(tenant: Tenant): TenantLimits {
    // A plan since removed from the catalog counts as the default: a tenant is never left unlimited by a typo.
    const own = tenant.config.plan;
    const name = own !== undefined && own in this.catalog.plans ? own : this.catalog.default;
    const plan = (name !== undefined ? this.catalog.plans[name] : undefined) ?? NO_PLAN;
    return {
      plan: name,
      rateLimit: tenant.config.rate_limit ?? plan.rateLimit,
      maxConnections: plan.maxConnections,
      databaseBytes: plan.databaseSize,
      fileBytes: plan.fileStorage,
      users: plan.users,
      maxPageLength: plan.maxPageLength,
      statementTimeoutMs: plan.statementTimeoutMs,
    };
  }
}
