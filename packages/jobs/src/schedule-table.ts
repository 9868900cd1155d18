import type { Queryable } from '@quire/db';

/**
 * `quire.job_schedules`: when each tenant's Scheduled Job Types next run, on the tenant's cluster.
 * The records themselves ("Scheduled Job Type") are the tenant's; this is their index, kept in
 * step by their controller (in the same transaction) and rebuilt from them on install and
 * migrate. The scheduler reads only the rows that are due (one index range), so 10,000 tenants
 * cost rows here, not Redis keys or a query per tenant.
 */
export async function createScheduleTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE quire.job_schedules (
    "tenant" text NOT NULL,
    "job_type" text NOT NULL,
    "method" text NOT NULL,
    "queue" text NOT NULL,
    "cron" text NOT NULL,
    "stopped" boolean NOT NULL DEFAULT false,
    "next_run_at" timestamp(6) NOT NULL,
    PRIMARY KEY ("tenant", "job_type")
  )`);
  await q.query(`CREATE INDEX job_schedules_due ON quire.job_schedules ("next_run_at") WHERE NOT "stopped"`);
}

export async function deleteTenantSchedules(q: Queryable, tenant: string): Promise<void> {
  await q.query(`DELETE FROM quire.job_schedules WHERE "tenant" = $1`, [tenant]);
}
