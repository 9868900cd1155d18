import type { Queryable } from '@quire/db';

/**
 * The outbox table, `quire.webhook_events`: one row per event, written in the same transaction as
 * the document change (outbox.ts), claimed, retried and finished by delivery (events.ts). Postgres
 * is the source of truth; queues only carry wake-ups. Created by the platform schema's migration
 * `0003_settings_and_webhook_outbox` (and on every other cluster by its own schema's migration,
 * clusters.ts); a later change to it is a new migration of both calling a function from here
 * (`0006` drops the tenant reference).
 */
export async function createOutboxTable(q: Queryable, options: { tenantReference?: boolean } = {}): Promise<void> {
  // The platform's own table was made with the reference (0006 drops it); other clusters have no quire.tenants.
  const reference = options.tenantReference === false ? '' : ' REFERENCES quire.tenants ("name") ON DELETE CASCADE';
  await q.query(`CREATE TABLE quire.webhook_events (
    "id" uuid PRIMARY KEY,
    "tenant" text NOT NULL${reference},
    "webhook" varchar(140) NOT NULL,
    "event" varchar(40) NOT NULL,
    "reference_doctype" varchar(140) NOT NULL,
    "reference_name" varchar(140) NOT NULL,
    "user" varchar(140),
    "url" text NOT NULL,
    "method" varchar(10) NOT NULL,
    "headers" jsonb NOT NULL DEFAULT '[]'::jsonb,
    "body" text NOT NULL,
    "timeout_ms" integer NOT NULL,
    "status" text NOT NULL DEFAULT 'pending' CHECK ("status" IN ('pending', 'delivered', 'failed', 'cancelled')),
    "attempts" integer NOT NULL DEFAULT 0,
    "created_at" timestamp(6) NOT NULL DEFAULT (clock_timestamp() at time zone 'utc'),
    "next_attempt_at" timestamp(6) NOT NULL DEFAULT (clock_timestamp() at time zone 'utc'),
    "lease_until" timestamp(6),
    "last_status_code" integer,
    "last_error" text,
    "first_attempt_at" timestamp(6),
    "delivered_at" timestamp(6)
  )`);
  await q.query(`CREATE INDEX webhook_events_due ON quire.webhook_events ("next_attempt_at") WHERE "status" = 'pending'`);
  await q.query(`CREATE INDEX webhook_events_tenant ON quire.webhook_events ("tenant", "webhook")`);
}

/**
 * The foreign key from an event to its tenant went (migration 0006): checking it made every write
 * that raised a webhook lock the tenant's row in quire.tenants (FOR KEY SHARE, a multixact under
 * concurrent writes), about 7% of Postgres' work per write (npm run bench -- writes). dropTenant
 * deletes a tenant's events itself, after its schema is gone (no write can add one then); an event
 * whose tenant is gone is cancelled by delivery.
 */
export async function dropOutboxTenantReference(q: Queryable): Promise<void> {
  await q.query(`ALTER TABLE quire.webhook_events DROP CONSTRAINT IF EXISTS webhook_events_tenant_fkey`);
}

/** What a fair claim reads (events.ts, CLAIM): each tenant's pending events in due order (the loose scan over tenants, and each one's oldest due). */
export async function createFairClaimIndexes(q: Queryable): Promise<void> {
  await q.query(`CREATE INDEX webhook_events_pending_tenant ON quire.webhook_events ("tenant", "next_attempt_at") WHERE "status" = 'pending'`);
}

/** A dropped tenant's events, pending or done. */
export async function deleteTenantEvents(q: Queryable, tenant: string): Promise<void> {
  await q.query(`DELETE FROM quire.webhook_events WHERE "tenant" = $1`, [tenant]);
}
