import { ident, qualified } from '@quire/db';
import { ValidationError } from '@quire/errors';
import type { DocField } from './definition';
import { fieldTypeSpec } from './fieldtypes';
import type { Meta } from './meta';

/**
 * The DDL planner: a DocType (or an old and a new version of one) -> the statements that make its
 * table match. Postgres DDL is transactional, so the caller runs these in the same transaction as
 * the DocType's own rows: a failing ALTER leaves nothing half-changed.
 */

function columnType(f: DocField): string {
  const spec = fieldTypeSpec(f.fieldtype);
  if (!spec.column) throw new Error(`${f.fieldtype} has no column`);
  return spec.column(f.length);
}

/** SQL literal of a numeric column's default (Frappe: cint/flt of the field default, else 0). */
function numericDefault(f: DocField): string {
  const kind = fieldTypeSpec(f.fieldtype).kind;
  const n = Number(f.default ?? 0);
  if (!Number.isFinite(n)) return '0';
  return String(kind === 'float' ? n : Math.trunc(n));
}

function columnDefinition(f: DocField): string {
  const spec = fieldTypeSpec(f.fieldtype);
  const base = `${ident(f.fieldname)} ${columnType(f)}`;
  return spec.notNull ? `${base} NOT NULL DEFAULT ${numericDefault(f)}` : base;
}

function isUnique(meta: Meta, f: DocField): boolean {
  return f.unique === 1 || (meta.namingRule === 'field' && meta.namingArgument === f.fieldname);
}

function indexStatements(meta: Meta, f: DocField): string[] {
  const out: string[] = [];
  if (isUnique(meta, f)) {
    out.push(`CREATE UNIQUE INDEX IF NOT EXISTS ${ident(meta.uniqueIndexName(f.fieldname))} ON ${meta.table} (${ident(f.fieldname)})`);
  }
  if (f.search_index === 1 && !isUnique(meta, f)) {
    out.push(`CREATE INDEX IF NOT EXISTS ${ident(meta.searchIndexName(f.fieldname))} ON ${meta.table} (${ident(f.fieldname)})`);
  }
  return out;
}

export function createTableStatements(meta: Meta): string[] {
  if (meta.issingle || meta.isVirtual) return [];
  const autoincrement = meta.namingRule === 'autoincrement';
  const cols = [
    autoincrement ? `"name" bigint PRIMARY KEY` : `"name" varchar(140) PRIMARY KEY`,
    `"creation" timestamp(6)`,
    `"modified" timestamp(6)`,
    `"modified_by" varchar(140)`,
    `"owner" varchar(140)`,
    `"docstatus" smallint NOT NULL DEFAULT 0`,
    `"idx" bigint NOT NULL DEFAULT 0`,
    ...(meta.istable
      ? [`"parent" varchar(140)`, `"parentfield" varchar(140)`, `"parenttype" varchar(140)`]
      : [`"_user_tags" text`, `"_comments" text`, `"_assign" text`, `"_liked_by" text`]),
    ...meta.dataFields.map(columnDefinition),
  ];
  const out: string[] = [];
  if (autoincrement) out.push(`CREATE SEQUENCE IF NOT EXISTS ${meta.sequence}`);
  out.push(`CREATE TABLE IF NOT EXISTS ${meta.table} (\n  ${cols.join(',\n  ')}\n)`);
  if (meta.istable) {
    out.push(`CREATE INDEX IF NOT EXISTS ${ident(meta.searchIndexName('parent'))} ON ${meta.table} ("parent")`);
  } else {
    out.push(`CREATE INDEX IF NOT EXISTS ${ident(meta.searchIndexName('creation'))} ON ${meta.table} ("creation")`);
    const sort = sortColumn(meta);
    if (sort && sort !== 'creation' && sort !== 'name') {
      out.push(`CREATE INDEX IF NOT EXISTS ${ident(meta.searchIndexName(sort))} ON ${meta.table} (${ident(sort)})`);
    }
  }
  for (const f of meta.dataFields) out.push(...indexStatements(meta, f));
  return out;
}

function sortColumn(meta: Meta): string | undefined {
  const first = meta.sortField.split(',')[0]?.trim().split(/\s+/)[0];
  return first && meta.hasColumn(first) ? first : undefined;
}

export function dropTableStatements(meta: Meta): string[] {
  if (meta.issingle || meta.isVirtual) return [];
  const out = [`DROP TABLE IF EXISTS ${meta.table}`];
  if (meta.namingRule === 'autoincrement') out.push(`DROP SEQUENCE IF EXISTS ${meta.sequence}`);
  return out;
}

function refuse(message: string): never {
  throw new ValidationError(message, { title: 'Cannot Change DocType' });
}

/** Statements that turn `old`'s table into `next`'s, keeping the data of every unchanged field. */
export function alterTableStatements(old: Meta, next: Meta): string[] {
  if (old.issingle !== next.issingle) refuse(`Cannot change ${next.name} between Single and not Single`);
  if (old.istable !== next.istable) refuse(`Cannot change ${next.name} between child table and not child table`);
  if (old.isVirtual !== next.isVirtual) refuse(`Cannot change ${next.name} between virtual and not virtual`);
  if (next.issingle || next.isVirtual) return [];
  if ((old.namingRule === 'autoincrement') !== (next.namingRule === 'autoincrement')) {
    refuse(`Cannot change the naming of ${next.name} to or from Autoincrement once it exists`);
  }
  const out: string[] = [];
  const table = next.table;
  const oldFields = new Map(old.dataFields.map((f) => [f.fieldname, f]));
  const newFields = new Map(next.dataFields.map((f) => [f.fieldname, f]));

  for (const [name] of oldFields) {
    if (!newFields.has(name)) out.push(`ALTER TABLE ${table} DROP COLUMN IF EXISTS ${ident(name)}`);
  }
  for (const [name, f] of newFields) {
    const before = oldFields.get(name);
    if (!before) {
      out.push(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${columnDefinition(f)}`);
      out.push(...indexStatements(next, f));
      continue;
    }
    const col = ident(name);
    const [oldType, newType] = [columnType(before), columnType(f)];
    const [oldNotNull, newNotNull] = [fieldTypeSpec(before.fieldtype).notNull === true, fieldTypeSpec(f.fieldtype).notNull === true];
    if (oldNotNull && !newNotNull) out.push(`ALTER TABLE ${table} ALTER COLUMN ${col} DROP NOT NULL, ALTER COLUMN ${col} DROP DEFAULT`);
    if (oldType !== newType) out.push(`ALTER TABLE ${table} ALTER COLUMN ${col} TYPE ${newType} USING ${castExpression(col, oldType, newType)}`);
    if (newNotNull && (!oldNotNull || numericDefault(before) !== numericDefault(f))) {
      out.push(`UPDATE ${table} SET ${col} = ${numericDefault(f)} WHERE ${col} IS NULL`);
      out.push(`ALTER TABLE ${table} ALTER COLUMN ${col} SET DEFAULT ${numericDefault(f)}, ALTER COLUMN ${col} SET NOT NULL`);
    }
    const [wasUnique, isNowUnique] = [isUnique(old, before), isUnique(next, f)];
    if (wasUnique && !isNowUnique) out.push(`DROP INDEX IF EXISTS ${qualified(next.schema, next.uniqueIndexName(name))}`);
    if (before.search_index === 1 && (f.search_index !== 1 || isNowUnique)) {
      out.push(`DROP INDEX IF EXISTS ${qualified(next.schema, next.searchIndexName(name))}`);
    }
    if ((!wasUnique && isNowUnique) || (f.search_index === 1 && before.search_index !== 1)) out.push(...indexStatements(next, f));
  }
  const [oldSort, newSort] = [sortColumn(old), sortColumn(next)];
  if (newSort && newSort !== oldSort && newSort !== 'creation' && newSort !== 'name') {
    out.push(`CREATE INDEX IF NOT EXISTS ${ident(next.searchIndexName(newSort))} ON ${table} (${ident(newSort)})`);
  }
  return out;
}

/** A USING expression that keeps values across a type change; text to smallint reads 0/1 strings. */
function castExpression(col: string, oldType: string, newType: string): string {
  const isText = (t: string) => t === 'text' || t.startsWith('varchar');
  if (isText(oldType) && (newType === 'bigint' || newType === 'smallint' || newType.startsWith('numeric'))) {
    return `NULLIF(btrim(${col}), '')::${newType}`;
  }
  if (isText(oldType) && (newType === 'date' || newType.startsWith('timestamp') || newType.startsWith('time'))) {
    return `NULLIF(btrim(${col}), '')::${newType}`;
  }
  if (newType === 'json') return `NULLIF(${col}::text, '')::json`;
  return `${col}::${newType}`;
}
