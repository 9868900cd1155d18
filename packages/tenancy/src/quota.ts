import type { Queryable } from '@quire/db';
import type { WriteQuota } from '@quire/documents';
import { QuotaExceededError } from '@quire/errors';
import type { Tenant } from './directory';
import type { TenantLimits } from './plans';
import { countedUsersSql, fileBytesSql } from './usage';

/** `1.5 GiB`, `300 MiB`: a size as people read it. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/**
 * A tenant's plan, asked before the tenant grows. Database size is the last measure (usage.ts,
 * every USAGE_MEASURE_MS): once at the plan's size, the documents a caller inserts are refused until
 * some are deleted or the plan grows, while what is stored stays readable, editable and deletable.
 * Users and file storage are counted when asked (a User or an upload is rare next to reads).
 */
export class PlanQuota implements WriteQuota {
  constructor(
    private readonly tenant: Tenant,
    private readonly limits: TenantLimits,
  ) {}

  /** The quota of a tenant whose plan limits anything it checks; else undefined (nothing to ask). */
  static of(tenant: Tenant, limits: TenantLimits): PlanQuota | undefined {
    return limits.databaseBytes !== undefined || limits.users !== undefined || limits.fileBytes !== undefined ? new PlanQuota(tenant, limits) : undefined;
  }

  async beforeInsert(q: Queryable, doctype: string, byCaller: boolean): Promise<void> {
    const { databaseBytes: limit, users } = this.limits;
    const size = this.tenant.databaseBytes;
    if (byCaller && limit !== undefined && size !== undefined && size >= limit) {
      throw new QuotaExceededError(
        `This site's database has reached the ${formatBytes(limit)} its plan allows (${formatBytes(size)} measured): delete documents it no longer needs, or move it to a larger plan`,
        { title: 'Database Full' },
      );
    }
    if (doctype === 'User' && users !== undefined) {
      if ((await scalar(q, countedUsersSql(this.tenant.schema))) >= users) {
        throw new QuotaExceededError(`This site's plan allows ${users} users, and ${users} are enabled: disable one, or move the site to a larger plan`, {
          title: 'User Limit Reached',
        });
      }
    }
  }

  async beforeStoring(q: Queryable, bytes: number): Promise<void> {
    const limit = this.limits.fileBytes;
    if (limit === undefined) return;
    const stored = await scalar(q, fileBytesSql(this.tenant.schema));
    if (stored + bytes > limit) {
      throw new QuotaExceededError(
        `This file (${formatBytes(bytes)}) does not fit: the site stores ${formatBytes(stored)} of the ${formatBytes(limit)} its plan allows. Delete files it no longer needs, or move it to a larger plan`,
        { title: 'File Storage Full' },
      );
    }
  }
}

/** The one number a counting statement answers. */
async function scalar(q: Queryable, sql: string): Promise<number> {
  const { rows } = await q.query<{ n: number | string }>(`SELECT (${sql}) AS n`);
  return Number(rows[0]?.n ?? 0);
}
