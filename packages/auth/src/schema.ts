import type { Migration } from '@quire/db';
import { authTableDDL } from './auth-table';
import { loginAttemptsTableDDL } from './login';
import { sessionsTableDDL } from './sessions';

/**
 * The tables of a tenant's schema this package owns: hashed secrets (`__Auth`), login sessions and
 * login throttling. Applied to every tenant by its migration runner (@quire/tenancy).
 */
export const authMigrations: readonly Migration[] = [
  {
    // The baseline: tenants installed before migrations were versioned already have these tables.
    id: 'auth:0001_tables',
    async up(q, schema) {
      for (const sql of [authTableDDL(schema), ...sessionsTableDDL(schema), loginAttemptsTableDDL(schema)]) await q.query(sql);
    },
  },
];
