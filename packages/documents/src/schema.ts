import { qualified, type Migration } from '@quire/db';

/**
 * The tables of a tenant's schema that hold documents without being a DocType's own table: Singles'
 * values and naming-series counters. DocType tables themselves are created by the DocType controller.
 */
export const documentsMigrations: readonly Migration[] = [
  {
    // The baseline: tenants installed before migrations were versioned already have these tables.
    id: 'documents:0001_singles_and_series',
    async up(q, schema) {
      await q.query(`CREATE TABLE IF NOT EXISTS ${qualified(schema, 'tabSingles')} (
        "doctype" varchar(140) NOT NULL, "field" varchar(140) NOT NULL, "value" text,
        PRIMARY KEY ("doctype", "field"))`);
      await q.query(`CREATE TABLE IF NOT EXISTS ${qualified(schema, 'tabSeries')} ("name" varchar(140) PRIMARY KEY, "current" bigint NOT NULL DEFAULT 0)`);
    },
  },
];
