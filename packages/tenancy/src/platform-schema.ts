import { createUsageTables } from './usage';
import type { Migration } from '@quire/db';
import { createRateCountersTable, createRateWindowsTable } from '@quire/limits';
import { createFilePurgesTable } from './file-purge';
import { createSparesTable, createTemplatesTable } from './release-schemas';
import { createMoveObjects, createTenantMovesTable } from './move';
import { createFairClaimIndexes, createOutboxTable, dropOutboxTenantReference } from '@quire/webhooks';
import { createJobsTable, createScheduleTable, createWorkersTable } from '@quire/jobs';

/** The platform's own schema: the tenant registry. Tenants' tables live in their own schemas. */
export const PLATFORM_SCHEMA = 'quire';

/**
 * Additive only: during a rolling upgrade the previous release's processes keep running against
 * this schema, so a release adds tables, columns and indexes (expand) and removes or renames
 * what it no longer reads only in a later release (contract), never in the same one. The same
 * holds for tenant migrations and standard DocType changes.
 */
export const platformMigrations: readonly Migration[] = [
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
     * the webhook outbox (defined beside the code that reads it, in @quire/webhooks).
     */
    id: '0003_settings_and_webhook_outbox',
    async up(q) {
      await q.query(`CREATE TABLE quire.settings ("key" text PRIMARY KEY, "value" text NOT NULL)`);
      await createOutboxTable(q);
    },
  },
  {
    /**
     * Which release each tenant has been migrated to, so that `quire migrate` resumes where a
     * killed run stopped and readiness can tell whether every tenant is at this build's release
     * (release.ts). A release row is complete once every tenant was recorded at it.
     */
    id: '0004_release_progress',
    async up(q) {
      await q.query(`CREATE TABLE quire.releases (
        "release" text PRIMARY KEY,
        "started_at" timestamp(6) NOT NULL DEFAULT now(),
        "completed_at" timestamp(6)
      )`);
      await q.query(`CREATE TABLE quire.tenant_releases (
        "tenant" text NOT NULL REFERENCES quire.tenants ("name") ON DELETE CASCADE,
        "release" text NOT NULL,
        "migrated_at" timestamp(6) NOT NULL DEFAULT now(),
        PRIMARY KEY ("tenant", "release")
      )`);
    },
  },
  {
    /** The template each release provisions tenants from (template.ts): its schema and recorded DDL. */
    id: '0005_tenant_templates',
    async up(q) {
      await createTemplatesTable(q);
    },
  },
  {
    /** Outbox rows no longer lock their tenant's row on every write (outbox-table.ts); dropTenant deletes them. */
    id: '0006_outbox_without_tenant_reference',
    async up(q) {
      await dropOutboxTenantReference(q);
    },
  },
  {
    /** Tenant schemas copied from the template ahead of time; provisioning renames one (spares.ts). */
    id: '0007_tenant_spares',
    async up(q) {
      await createSparesTable(q);
    },
  },
  {
    /** Rate-limit windows every process counts in (@quire/limits, rate-counter.ts). */
    id: '0008_rate_counters',
    async up(q) {
      await createRateCountersTable(q);
    },
  },
  {
    /** Dropped tenants whose uploaded files the API processes are to remove (file-purge.ts). */
    id: '0009_tenant_file_purges',
    async up(q) {
      await createFilePurgesTable(q);
    },
  },
  {
    /** Tenants' site rate-limit windows (request time), when no Redis holds them (@quire/limits, site-rate-limit.ts). */
    id: '0010_rate_windows',
    async up(q) {
      await createRateWindowsTable(q);
    },
  },
  {
    /** A tenant may also be read-only (reads served, writes refused): `quire tenant suspend --read-only`. */
    id: '0011_tenant_read_only',
    async up(q) {
      await q.query(`ALTER TABLE quire.tenants DROP CONSTRAINT IF EXISTS tenants_status_check`);
      await q.query(`ALTER TABLE quire.tenants ADD CONSTRAINT tenants_status_check CHECK ("status" IN ('active', 'suspended', 'read_only'))`);
    },
  },
  {
    /** Usage metering: what tenants keep (measured) and what their requests cost, by day (usage.ts). */
    id: '0012_tenant_usage',
    async up(q) {
      await createUsageTables(q);
    },
  },
  {
    /**
     * Clusters (clusters.ts): tenants' schemas on several Postgres clusters. The platform's own
     * database is the cluster `default`, where every tenant made before this is.
     */
    id: '0013_clusters',
    async up(q) {
      await q.query(`CREATE TABLE quire.clusters (
        "name" text PRIMARY KEY,
        "url" text NOT NULL,
        "direct_url" text,
        "pool_mode" text NOT NULL DEFAULT 'session' CHECK ("pool_mode" IN ('session', 'transaction')),
        "weight" integer NOT NULL DEFAULT 1 CHECK ("weight" BETWEEN 1 AND 1000),
        "state" text NOT NULL DEFAULT 'active' CHECK ("state" IN ('active', 'draining')),
        "created_at" timestamp(6) NOT NULL DEFAULT now()
      )`);
      await q.query(`INSERT INTO quire.clusters ("name", "url") VALUES ('default', 'platform:')`);
      await q.query(`ALTER TABLE quire.tenants ADD COLUMN "cluster" text NOT NULL DEFAULT 'default' REFERENCES quire.clusters ("name")`);
      await q.query(`CREATE INDEX tenants_cluster ON quire.tenants ("cluster")`);
    },
  },
  {
    /** Moves of tenants between clusters (move.ts): their record, `tenants.moving_to`, and what the platform's own cluster needs as either end. */
    id: '0014_tenant_moves',
    async up(q) {
      await createTenantMovesTable(q);
      await createMoveObjects(q);
    },
  },
  {
    /** Background jobs and the scheduler's index (@quire/jobs), beside the webhook outbox: a job commits with what enqueued it. */
    id: '0015_jobs',
    async up(q) {
      await createJobsTable(q);
      await createScheduleTable(q);
      await createWorkersTable(q);
    },
  },
  {
    /** Webhook events claimed fairly between tenants (@quire/webhooks events.ts). */
    id: '0016_webhook_fair_claim',
    async up(q) {
      await createFairClaimIndexes(q);
    },
  },
];
