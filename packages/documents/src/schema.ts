import { qualified, type Migration } from '@quire/db';

/**
 * The tables of a tenant's schema that hold documents without being a DocType's own table: Singles'
 * values, naming-series counters and the global search index. DocType tables themselves are created by the DocType controller.
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
  {
    // Frappe's __global_search: one row per document of a DocType with `in_global_search` fields,
    // kept by the frappe app's global search hooks in the save's transaction. The GIN index on the
    // words makes a search cost the matching rows, not the table (apps/frappe/utils/global_search.ts).
    id: 'documents:0002_global_search',
    async up(q, schema) {
      const table = qualified(schema, '__global_search');
      await q.query(`CREATE TABLE IF NOT EXISTS ${table} (
        "doctype" varchar(140) NOT NULL, "name" varchar(140) NOT NULL, "title" text, "content" text NOT NULL, "route" text,
        PRIMARY KEY ("doctype", "name"))`);
      await q.query(`CREATE INDEX IF NOT EXISTS "__global_search_words" ON ${table} USING gin (to_tsvector('simple'::regconfig, "content"))`);
    },
  },
];
