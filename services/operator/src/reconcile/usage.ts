import { readUsage, type Platform, type Tenant, type TenantUsage } from '@quire/tenancy';
import type { TenantResource, TenantUsageStatus } from '../tenant-resource';
import { canonicalJson } from './canonical';

/** Tenants whose usage one query reads (readUsage sums up to 30 daily rows for each). */
const READ_BATCH = 500;

interface Reading {
  usage: TenantUsage;
  readAt: number;
}

/**
 * Tenants' usage as their status.usage shows it, read from the platform's tables at most once per
 * `maxAgeMs` per tenant. The controller reads every Tenant's each period, a batch per query, so a
 * reconcile finds its tenant's reading fresh and needs no query of its own (`maxAgeMs` 0: every
 * reconcile reads its own).
 */
export class UsageReadings {
  private readings = new Map<string, Reading>();

  constructor(
    private readonly platform: Platform,
    private readonly maxAgeMs: number,
  ) {}

  /** Reads the usage of exactly these tenants now; readings of any other (a Tenant deleted since) are let go. */
  async refresh(names: readonly string[]): Promise<void> {
    const fresh = await this.read(names);
    this.readings = fresh;
  }

  /** `tenant`'s status.usage: figures read at most maxAgeMs ago (read now when older), its plan as of now. */
  async statusOf(tenant: Tenant): Promise<TenantUsageStatus | undefined> {
    const reading = this.readings.get(tenant.name);
    if (!reading || Date.now() - reading.readAt >= this.maxAgeMs) {
      for (const [name, fresh] of await this.read([tenant.name])) this.readings.set(name, fresh);
    }
    return this.cachedStatusOf(tenant);
  }

  /** Whether a reconcile would write other usage figures than the resource's status shows (a status with no tenant has none). */
  outdated(resource: TenantResource): boolean {
    if (resource.metadata?.deletionTimestamp || resource.status?.schema === undefined) return false;
    const tenant = this.platform.tenants.get(resource.metadata?.name ?? '');
    const now = tenant && this.cachedStatusOf(tenant);
    return now !== undefined && canonicalJson(now) !== canonicalJson(resource.status.usage ?? null);
  }

  private cachedStatusOf(tenant: Tenant): TenantUsageStatus | undefined {
    const reading = this.readings.get(tenant.name);
    return reading && usageStatus(reading.usage, this.platform.limitsOf(tenant).plan);
  }

  private async read(names: readonly string[]): Promise<Map<string, Reading>> {
    const out = new Map<string, Reading>();
    for (let i = 0; i < names.length; i += READ_BATCH) {
      const readAt = Date.now();
      for (const usage of await readUsage(this.platform.db, names.slice(i, i + READ_BATCH))) out.set(usage.tenant, { usage, readAt });
    }
    return out;
  }
}

/** status.usage from a reading: figures not measured yet are left out (TenantUsageStatus says why). */
export function usageStatus(usage: TenantUsage, plan: string | undefined): TenantUsageStatus {
  return {
    plan,
    requestsToday: usage.today.requests,
    requestSecondsToday: usage.today.requestSeconds,
    databaseSecondsToday: usage.today.dbSeconds,
    databaseBytes: usage.databaseBytes ?? undefined,
    fileBytes: usage.fileBytes ?? undefined,
    users: usage.users ?? undefined,
    measuredAt: usage.measuredAt ?? undefined,
  };
}
