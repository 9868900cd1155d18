import type { Queryable } from '@quire/db';

/**
 * The tables that list schemas by release (the release's template, the spares copied from it), in
 * the platform database (migrations 0005 and 0007) and in every other cluster's own schema
 * (clusters.ts). A module of its own: the platform schema's migrations import it, and template.ts
 * and spares.ts import what imports those.
 */

/** quire.tenant_templates, in the platform database (migration 0005) and in every other cluster's own schema. */
export async function createTemplatesTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE quire.tenant_templates (
        "release" text PRIMARY KEY,
        "schema" text NOT NULL UNIQUE,
        "ddl" jsonb NOT NULL,
        "tables" jsonb NOT NULL,
        "sequences" jsonb NOT NULL,
        "created_at" timestamp(6) NOT NULL DEFAULT now()
      )`);
}

/** quire.tenant_spares, in the platform database (migration 0007) and in every other cluster's own schema. */
export async function createSparesTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE quire.tenant_spares (
    "schema" text PRIMARY KEY,
    "release" text NOT NULL,
    "created_at" timestamp(6) NOT NULL DEFAULT now()
  )`);
  await q.query(`CREATE INDEX tenant_spares_release ON quire.tenant_spares ("release", "created_at")`);
}
