import type { Migration } from '@quire/db';
import { keysTableDDL } from './keys';
import { oidcTableDDL } from './oidc-store';
import { revocationsTableDDL } from './revocations';

/**
 * The tables of a tenant's schema this package owns: signing keys, revocations, and oidc-provider's
 * models. Applied to every tenant by its migration runner (@quire/tenancy).
 */
export const oauthMigrations: readonly Migration[] = [
  {
    // The baseline: tenants installed before migrations were versioned already have these tables.
    id: 'oauth:0001_tables',
    async up(q, schema) {
      for (const sql of [keysTableDDL(schema), revocationsTableDDL(schema), ...oidcTableDDL(schema)]) await q.query(sql);
    },
  },
];
