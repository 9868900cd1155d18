import { authMigrations } from '@quire/auth';
import { runMigrations, type Migration, type Transaction } from '@quire/db';
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
export const tenantMigrations: readonly Migration[] = [...documentsMigrations, ...authMigrations, ...oauthMigrations];

/** Applies the tenant schema's pending migrations inside `tx`; returns their ids. */
export function migrateTenantSchema(tx: Transaction, schema: string, lock: boolean): Promise<string[]> {
  return runMigrations(tx, schema, tenantMigrations, { lock });
}
