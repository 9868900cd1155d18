import { docFieldSchema, type ColumnInfo, type DocField, type Meta, type ValueKind } from '@quire/meta';

/**
 * The column reference grammar shared by fields, filters, order_by and group_by:
 *   col | `col`                       → plain
 *   prefix.col (either part backquoted) → dotted: a Table/Link field of the DocType, or `tab<DocType>`
 */

export type ColumnSyntax = { form: 'plain'; column: string } | { form: 'dotted'; prefix: string; column: string };

const PLAIN_RE = /^(?:`([A-Za-z_][A-Za-z0-9_]*)`|([A-Za-z_][A-Za-z0-9_]*))$/;
const DOTTED_RE = /^(?:`([A-Za-z][A-Za-z0-9 _-]*)`|([A-Za-z_][A-Za-z0-9_-]*))\.(?:`([A-Za-z_][A-Za-z0-9_]*)`|([A-Za-z_][A-Za-z0-9_]*))$/;

export function parseColumnRef(text: string): ColumnSyntax | undefined {
  const s = text.trim();
  const plain = PLAIN_RE.exec(s);
  if (plain) return { form: 'plain', column: (plain[1] ?? plain[2]) as string };
  const dotted = DOTTED_RE.exec(s);
  if (dotted) return { form: 'dotted', prefix: (dotted[1] ?? dotted[2]) as string, column: (dotted[3] ?? dotted[4]) as string };
  return undefined;
}

/** `tabX` → `X` when a dotted prefix names a DocType table rather than a field. */
export function doctypeOfPrefix(prefix: string): string | undefined {
  return prefix.startsWith('tab') && prefix.length > 3 ? prefix.slice(3) : undefined;
}

/** One table of the statement: its alias, its DocType and the fields the caller may not read there. */
export interface TableScope {
  readonly alias: string;
  readonly meta: Meta;
  readonly hidden: ReadonlySet<string>;
}

export interface ColumnRef {
  readonly scope: TableScope;
  readonly column: ColumnInfo;
}

/** `alias."col"`. */
export function columnSql(ref: ColumnRef): string {
  return `${ref.scope.alias}.${ref.column.sql}`;
}

/** A readable column of the table, or undefined when it does not exist or is permlevel-hidden. */
export function readableColumn(scope: TableScope, name: string): ColumnInfo | undefined {
  const column = scope.meta.column(name);
  return column && !scope.hidden.has(name) ? column : undefined;
}

export function isHidden(scope: TableScope, name: string): boolean {
  return scope.meta.column(name) !== undefined && scope.hidden.has(name);
}

// ---------------------------------------------------------------------------------------------
// DocField stand-ins for standard columns (coerceFilterValue only names the field in errors)

const KIND_FIELDTYPE: Record<ValueKind, string> = {
  text: 'Data',
  int: 'Int',
  float: 'Float',
  check: 'Check',
  date: 'Date',
  datetime: 'Datetime',
  time: 'Time',
  json: 'JSON',
  table: 'Data',
  none: 'Data',
};

const stubs = new Map<string, DocField>();

/** The DocField behind a column, or a stand-in named after the column. */
export function fieldOf(column: ColumnInfo): DocField {
  if (column.field) return column.field;
  const key = `${column.kind}\0${column.name}`;
  let stub = stubs.get(key);
  if (!stub) {
    stub = docFieldSchema.parse({ fieldname: column.name, label: column.name, fieldtype: KIND_FIELDTYPE[column.kind] });
    stubs.set(key, stub);
  }
  return stub;
}
