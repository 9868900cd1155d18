import { type Migration } from '@quire/db';

/** The platform's own schema: the tenant registry. Tenants' tables live in their own schemas. */
export const PLATFORM_SCHEMA = 'quire';

export const platformMigrations: Migration[] = [
  {
    id: '0001_tenants',
    async up(q) {
      await q.query(`CREATE TABLE quire.tenants (
        "name" text PRIMARY KEY,
        "schema" text NOT NULL UNIQUE,
        "status" text NOT NULL DEFAULT 'active' CHECK ("status" IN ('active', 'suspended')),
        "meta_version" bigint NOT NULL DEFAULT 0,
        "created_at" timestamp(6) NOT NULL DEFAULT now()
      )`);
      await q.query(`CREATE TABLE quire.tenant_domains (
        "domain" text PRIMARY KEY,
        "tenant" text NOT NULL REFERENCES quire.tenants ("name") ON DELETE CASCADE
      )`);
      await q.query(`CREATE INDEX tenant_domains_tenant ON quire.tenant_domains ("tenant")`);
    },
  },
  {
    /** Per-tenant settings (Frappe's site_config), e.g. `allow_cors`. */
    id: '0002_tenant_config',
    async up(q) {
      await q.query(`ALTER TABLE quire.tenants ADD COLUMN "config" jsonb NOT NULL DEFAULT '{}'::jsonb`);
    },
  },
  {
    /**
     * Platform settings (the generated encryption key when QUIRE_ENCRYPTION_KEY is not set), and
     * the webhook outbox: one row per event, written in the same transaction as the document
     * change, delivered (and retried) from here. Postgres is the source of truth; queues only
     * carry wake-ups.
     */
    id: '0003_settings_and_webhook_outbox',
    async up(q) {
      await q.query(`CREATE TABLE quire.settings ("key" text PRIMARY KEY, "value" text NOT NULL)`);
      await q.query(`CREATE TABLE quire.webhook_events (
        "id" uuid PRIMARY KEY,
        "tenant" text NOT NULL REFERENCES quire.tenants ("name") ON DELETE CASCADE,
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
    },
  },
];
