import { authMigrations } from '@quire/auth';
import { qualified, runMigrations, type Migration, type Transaction } from '@quire/db';
import { documentsMigrations } from '@quire/documents';
import { oauthMigrations } from '@quire/oauth';

/**
 * Every tenant schema's own tables besides its DocTypes', versioned: each package defines the
 * migrations of the tables it reads (ids prefixed with the package), and this one runner applies
 * them to a tenant when it is installed and on every `quire migrate`. DocType tables follow their
 * DocType documents instead (the DocType controller's DDL planner).
 *
 * Additive only (expand now, contract in a later release): while `quire migrate` runs, the previous
 * release's processes still serve this tenant from the same tables.
 */
export const tenantMigrations: readonly Migration[] = [...documentsMigrations, ...authMigrations, ...oauthMigrations, ...deskMigrations()];

/** Applies the tenant schema's pending migrations inside `tx`; returns their ids. */
export function migrateTenantSchema(tx: Transaction, schema: string, lock: boolean): Promise<string[]> {
  return runMigrations(tx, schema, tenantMigrations, { lock });
}

/**
 * Tables the desk's methods keep per tenant: Frappe's `__UserSettings` (a user's list settings per
 * DocType, a JSON text; read and written by the frappe app's frappe.model.utils.user_settings).
 * Apps have no migrations of their own, so the frappe app's tables are listed here, under `desk:`.
 */
function deskMigrations(): Migration[] {
  return [
    {
      id: 'desk:0001_user_settings',
      async up(q, schema) {
        await q.query(`CREATE TABLE IF NOT EXISTS ${qualified(schema, '__UserSettings')} (
          "user" varchar(140) NOT NULL, "doctype" varchar(140) NOT NULL, "data" text NOT NULL,
          PRIMARY KEY ("user", "doctype"))`);
      },
    },
  ];
}
