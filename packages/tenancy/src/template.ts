import type { LoadedApps } from '@quire/apps';
import { ident, literal, qualified, withAdvisoryLock, type Database, type Queryable, type Transaction } from '@quire/db';
import { nowDatetime, type TenantRef } from '@quire/meta';
import { installStandard, type InstallServices } from './install';
import { releaseOf } from './release';

/**
 * Provisioning from a template. Installing a tenant the long way stores every standard DocType
 * through the document lifecycle: some 250 statements, most of the time round trips. So the first
 * tenant of a release is installed that way into a template schema while the DDL it runs is
 * recorded; every later tenant gets that DDL (the template's schema name swapped for its own) in
 * one round trip and the template's rows copied in another. Both ways give the same tables,
 * indexes and rows (a test compares them); only the time differs.
 *
 * The recorded plan lives in quire.tenant_templates, so a `quire tenant create` process reads it
 * instead of building it. A template is dropped only by `quire migrate` once a newer release is
 * complete; a provisioning transaction holds its row (FOR KEY SHARE) so the drop waits for it.
 */

interface TemplateTable {
  name: string;
  columns: string[];
  /** Whether the template holds rows in it (absent in plans recorded before this was). */
  filled?: boolean;
}

interface TemplateSequence {
  name: string;
  value: number;
  called: boolean;
}

export interface TemplatePlan {
  release: string;
  schema: string;
  /** The template's DDL, in the order it ran, naming the template schema. */
  ddl: string[];
  tables: TemplateTable[];
  sequences: TemplateSequence[];
}

interface TemplateRow {
  release: string;
  schema: string;
  ddl: string[] | string;
  tables: TemplateTable[] | string;
  sequences: TemplateSequence[] | string;
}

/** Columns that say when a row was made: a copied row gets the new tenant's time, not the template's. */
const STAMPS = new Set(['creation', 'modified', 'applied_at']);

const TEMPLATE_LOCK = 'quire:tenant-template';

/** The template schema of a release (never a tenant's: those start with `t_`). */
export function templateSchemaOf(release: string): string {
  return `quire_template_${release.slice(0, 16)}`;
}

function json<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

function fromRow(row: TemplateRow): TemplatePlan {
  return { release: row.release, schema: row.schema, ddl: json(row.ddl), tables: json(row.tables), sequences: json(row.sequences) };
}

export async function readPlan(q: Queryable, release: string, lock = false): Promise<TemplatePlan | undefined> {
  const { rows } = await q.query<TemplateRow>(
    `SELECT "release", "schema", "ddl", "tables", "sequences" FROM quire.tenant_templates WHERE "release" = $1${lock ? ' FOR KEY SHARE' : ''}`,
    [release],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** Statements that shape the schema; anything with parameters is data (copied with the rows instead). */
const DDL_RE = /^\s*(CREATE|ALTER|COMMENT\s+ON)\b/i;

/** `tx` as seen by the install, with every DDL statement it runs appended to `sink`. */
function recording(tx: Transaction, sink: string[]): Transaction {
  return {
    query: (text, values, options) => {
      if ((!values || values.length === 0) && DDL_RE.test(text)) sink.push(text.trim().replace(/;+$/, ''));
      return tx.query(text, values, options);
    },
    transaction: (fn) => tx.transaction((inner) => fn(recording(inner, sink))),
    savepoint: (fn) => tx.savepoint((inner) => fn(recording(inner, sink))),
    afterCommit: (fn) => tx.afterCommit(fn),
    defer: (write) => tx.defer(write),
    script: (sql) => {
      sink.push(sql);
      return tx.script(sql);
    },
  };
}

/** Installs the release's template schema the long way, recording its DDL; returns the plan. */
async function buildTemplate(tx: Transaction, release: string, apps: LoadedApps, services: InstallServices): Promise<TemplatePlan> {
  const schema = templateSchemaOf(release);
  await tx.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
  const ddl: string[] = [];
  await installStandard(recording(tx, ddl), { name: schema, schema }, apps, services);
  const { rows: columns } = await tx.query<{ table: string; column: string }>(
    `SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
     WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
    [schema],
  );
  const tables = new Map<string, string[]>();
  for (const c of columns) {
    let list = tables.get(c.table);
    if (!list) tables.set(c.table, (list = []));
    list.push(c.column);
  }
  const { rows: sequences } = await tx.query<{ name: string; value: string | number | null; called: boolean }>(
    `SELECT s.relname AS "name", q.last_value AS "value", q.last_value IS NOT NULL AS "called"
     FROM pg_class s JOIN pg_namespace n ON n.oid = s.relnamespace JOIN pg_sequences q ON q.schemaname = n.nspname AND q.sequencename = s.relname
     WHERE n.nspname = $1 AND s.relkind = 'S'`,
    [schema],
  );
  const counts = await tx.query<{ table: string; filled: boolean }>(
    [...tables.keys()].map((t) => `SELECT ${literal(t)} AS "table", EXISTS (SELECT 1 FROM ${qualified(schema, t)}) AS "filled"`).join(' UNION ALL '),
  );
  const filled = new Set(counts.rows.filter((r) => r.filled).map((r) => r.table));
  return {
    release,
    schema,
    // The DocType tables are created before their DocTypes are stored, and again (IF NOT EXISTS) after.
    ddl: [...new Set(ddl)],
    tables: [...tables].map(([name, cols]) => ({ name, columns: cols, filled: filled.has(name) })),
    sequences: sequences.map((s) => ({ name: s.name, value: Number(s.value ?? 1), called: s.called })),
  };
}

/** Whether the plan names its template schema only where swapping the quoted name can reach it. */
function swappable(plan: TemplatePlan): boolean {
  const quoted = ident(plan.schema);
  return !plan.ddl.some((s) => s.split(quoted).join('').includes(plan.schema));
}

/**
 * The per-process view of the release's template: read once from quire.tenant_templates, built
 * (under an advisory lock, in its own transaction) by whichever process needs it first.
 */
export class TenantTemplates {
  private plan: Promise<TemplatePlan | undefined> | undefined;

  constructor(
    private readonly db: Database,
    private readonly apps: LoadedApps,
  ) {}

  /** The release's plan, built if missing; undefined when this release cannot use one (then tenants are installed the long way). */
  get(services: InstallServices): Promise<TemplatePlan | undefined> {
    this.plan ??= this.load(services).catch((e: unknown) => {
      this.plan = undefined;
      throw e;
    });
    return this.plan;
  }

  /** Forgets the cached plan (its template was dropped under us). */
  reset(): void {
    this.plan = undefined;
  }

  private async load(services: InstallServices): Promise<TemplatePlan | undefined> {
    const release = releaseOf(this.apps);
    const existing = await readPlan(this.db, release);
    if (existing) return swappable(existing) ? existing : undefined;
    const plan = await withAdvisoryLock(this.db, TEMPLATE_LOCK, () =>
      this.db.transaction(async (tx) => {
        const raced = await readPlan(tx, release);
        if (raced) return raced;
        const built = await buildTemplate(tx, release, this.apps, services);
        await tx.query(
          `INSERT INTO quire.tenant_templates ("release", "schema", "ddl", "tables", "sequences") VALUES ($1, $2, $3::jsonb, $4::jsonb, $5::jsonb)`,
          [release, built.schema, JSON.stringify(built.ddl), JSON.stringify(built.tables), JSON.stringify(built.sequences)],
        );
        return built;
      }),
    );
    return swappable(plan) ? plan : undefined;
  }
}

/**
 * Creates `tenant`'s schema from the plan inside `tx`. False when the template is gone (dropped by
 * a newer release's migrate since the plan was read): the caller installs the long way.
 */
export async function provisionFromTemplate(tx: Transaction, plan: TemplatePlan, tenant: TenantRef): Promise<boolean> {
  if (!(await readPlan(tx, plan.release, true))) return false;
  await copyTemplate(tx, plan, tenant.schema);
  return true;
}

/**
 * Creates `schema` as a copy of the plan's template: its DDL in one round trip, its rows (stamped
 * now) and sequence positions in another. The caller holds the template's row.
 */
export async function copyTemplate(tx: Transaction, plan: TemplatePlan, schema: string): Promise<void> {
  const from = ident(plan.schema);
  const to = ident(schema);
  await tx.script(plan.ddl.map((s) => s.split(from).join(to)).join(';\n'));
  const now = literal(nowDatetime());
  const copies = plan.tables.flatMap(({ name, columns, filled }) => {
    if (filled === false) return [];
    const list = columns.map(ident).join(', ');
    const values = columns.map((c) => (STAMPS.has(c) ? now : ident(c))).join(', ');
    return [`INSERT INTO ${qualified(schema, name)} (${list}) SELECT ${values} FROM ${qualified(plan.schema, name)}`];
  });
  const positions = plan.sequences.map((s) => `SELECT setval(${literal(`${to}.${ident(s.name)}`)}, ${s.value}, ${s.called})`);
  await tx.script([...copies, ...positions].join(';\n'));
}

/** Statements that stamp the rows a copy of the plan holds in `schema` with the time now (a copy made ahead, taken by a tenant). */
export function restampStatements(plan: TemplatePlan, schema: string): string[] {
  const now = literal(nowDatetime());
  return plan.tables.flatMap(({ name, columns, filled }) => {
    const stamps = columns.filter((c) => STAMPS.has(c));
    return stamps.length === 0 || filled === false ? [] : [`UPDATE ${qualified(schema, name)} SET ${stamps.map((c) => `${ident(c)} = ${now}`).join(', ')}`];
  });
}

/** The platform tables that list schemas by release: each release's template, and the spares copied from it. */
type ReleaseSchemas = 'tenant_templates' | 'tenant_spares';

/**
 * Drops the schemas `table` lists for every release but `keep`, with their rows (run by `quire
 * migrate` once `keep` is complete); returns their names.
 */
export async function dropStaleSchemas(tx: Transaction, table: ReleaseSchemas, keep: string): Promise<string[]> {
  const { rows } = await tx.query<{ schema: string }>(`DELETE FROM ${qualified('quire', table)} WHERE "release" <> $1 RETURNING "schema"`, [keep]);
  for (const r of rows) await tx.query(`DROP SCHEMA IF EXISTS ${ident(r.schema)} CASCADE`);
  return rows.map((r) => r.schema);
}
