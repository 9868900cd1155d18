import { ident, type Executor, type Queryable, type Transaction } from '@quire/db';

/**
 * A tenant schema's DDL as its catalog has it: what a move makes on its target cluster and what a
 * backup carries. Tenant schemas hold tables, sequences, constraints and indexes only (our own
 * migrations and DocTypes make nothing else).
 *
 * Names are unqualified (read with the schema first on the search path), so the same statements
 * make the schema under another name: applySchemaDdl runs them with that schema on the search path.
 */
export interface SchemaDdl {
  /** CREATE SEQUENCE, CREATE TABLE (columns, defaults, NOT NULL), ALTER SEQUENCE … OWNED BY. */
  tables: string[];
  /** Primary keys, unique, check and exclusion constraints, then foreign keys, then plain indexes. */
  constraints: string[];
}

/** Reads `schema`'s DDL (see SchemaDdl); in `db`'s transaction when it is one (a backup's snapshot). */
export async function readSchemaDdl(db: Executor, schema: string): Promise<SchemaDdl> {
  return withSearchPath(db, schema, async (q) => {
    const tables = [...(await sequenceDdl(q, schema)), ...(await tableDdl(q, schema)), ...(await ownedByDdl(q, schema))];
    const constraints = [...(await constraintDdl(q, schema)), ...(await indexDdl(q, schema))];
    return { tables, constraints };
  });
}

/** Runs DDL read by readSchemaDdl so that it makes its objects in `schema` (which must exist). */
export async function applySchemaDdl(tx: Transaction, schema: string, statements: readonly string[]): Promise<void> {
  if (statements.length === 0) return;
  await withSearchPath(tx, schema, (q) => q.script(statements.join(';\n')));
}

/**
 * Runs `fn` in a savepoint with `schema` (then pg_catalog) as the search path, set back afterwards:
 * the catalog's deparsers leave names in the first schema of the path unqualified.
 */
function withSearchPath<T>(db: Executor, schema: string, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ path: string }>(`SELECT current_setting('search_path') AS "path"`);
    await tx.query(`SELECT set_config('search_path', $1, true)`, [`${ident(schema)}, pg_catalog`]);
    const result = await fn(tx);
    await tx.query(`SELECT set_config('search_path', $1, true)`, [rows[0]?.path ?? '"$user", public']);
    return result;
  });
}

async function sequenceDdl(q: Queryable, schema: string): Promise<string[]> {
  const { rows } = await q.query<{ name: string; type: string; increment: string; min: string; max: string; start: string; cycle: boolean }>(
    `SELECT s.sequencename AS "name", s.data_type::text AS "type", s.increment_by::text AS "increment", s.min_value::text AS "min",
            s.max_value::text AS "max", s.start_value::text AS "start", s.cycle
     FROM pg_sequences s WHERE s.schemaname = $1 ORDER BY 1`,
    [schema],
  );
  return rows.map(
    (s) =>
      `CREATE SEQUENCE ${ident(s.name)} AS ${s.type} INCREMENT ${s.increment} MINVALUE ${s.min} MAXVALUE ${s.max} START ${s.start}${s.cycle ? ' CYCLE' : ''}`,
  );
}

async function tableDdl(q: Queryable, schema: string): Promise<string[]> {
  const { rows } = await q.query<{ table: string; column: string; type: string; collation: string | null; notnull: boolean; default: string | null }>(
    `SELECT c.relname AS "table", a.attname AS "column", format_type(a.atttypid, a.atttypmod) AS "type", a.attnotnull AS "notnull",
            pg_get_expr(d.adbin, d.adrelid) AS "default",
            (SELECT quote_ident(co.collname) FROM pg_collation co WHERE co.oid = a.attcollation AND a.attcollation <> t.typcollation) AS "collation"
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     JOIN pg_type t ON t.oid = a.atttypid
     LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
     WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname, a.attnum`,
    [schema],
  );
  const tables = new Map<string, string[]>();
  for (const c of rows) {
    let columns = tables.get(c.table);
    if (!columns) tables.set(c.table, (columns = []));
    const collate = c.collation === null ? '' : ` COLLATE ${c.collation}`;
    columns.push(`${ident(c.column)} ${c.type}${collate}${c.default === null ? '' : ` DEFAULT ${c.default}`}${c.notnull ? ' NOT NULL' : ''}`);
  }
  return [...tables].map(([table, columns]) => `CREATE TABLE ${ident(table)} (${columns.join(', ')})`);
}

async function ownedByDdl(q: Queryable, schema: string): Promise<string[]> {
  const { rows } = await q.query<{ sequence: string; table: string; column: string }>(
    `SELECT s.relname AS "sequence", t.relname AS "table", a.attname AS "column"
     FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S' JOIN pg_namespace n ON n.oid = s.relnamespace
     JOIN pg_class t ON t.oid = d.refobjid JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
     WHERE n.nspname = $1 AND d.deptype = 'a' ORDER BY 1`,
    [schema],
  );
  return rows.map((o) => `ALTER SEQUENCE ${ident(o.sequence)} OWNED BY ${ident(o.table)}.${ident(o.column)}`);
}

/** Primary keys and unique constraints first (foreign keys need them), foreign keys last. */
async function constraintDdl(q: Queryable, schema: string): Promise<string[]> {
  const { rows } = await q.query<{ table: string; name: string; def: string }>(
    `SELECT t.relname AS "table", k.conname AS "name", pg_get_constraintdef(k.oid) AS "def"
     FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = $1 AND k.contype IN ('p', 'u', 'c', 'f', 'x') ORDER BY (k.contype = 'f'), t.relname, k.conname`,
    [schema],
  );
  return rows.map((k) => `ALTER TABLE ${ident(k.table)} ADD CONSTRAINT ${ident(k.name)} ${k.def}`);
}

/** Indexes that are not a constraint's; pg_get_indexdef qualifies the table whatever the path, so the schema is taken off. */
async function indexDdl(q: Queryable, schema: string): Promise<string[]> {
  const { rows } = await q.query<{ def: string }>(
    `SELECT replace(replace(pg_get_indexdef(i.indexrelid), ' ON ONLY ' || quote_ident(n.nspname) || '.', ' ON ONLY '),
                    ' ON ' || quote_ident(n.nspname) || '.', ' ON ') AS "def"
     FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_namespace n ON n.oid = x.relnamespace
     WHERE n.nspname = $1 AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype IN ('p', 'u', 'x'))
     ORDER BY 1`,
    [schema],
  );
  return rows.map((i) => i.def);
}
