import { fieldTypeSpec, NULL_FALLBACK, type ColumnInfo, type ValueKind } from '@quire/meta';

/**
 * Frappe's NULL handling (frappe-wire.md §2.3): nullable columns are compared through
 * `coalesce(col, fallback)`, so NULL behaves as ''/0/'0001-01-01'.
 */

/** Columns that are never NULL in any table. */
const NEVER_NULL = new Set(['name', 'creation', 'modified']);
/** Standard columns created NOT NULL. */
const NOT_NULL_STANDARD = new Set(['docstatus', 'idx']);
const DATE_KINDS = new Set<ValueKind>(['date', 'datetime', 'time']);

/** The fallback as a bind value (what an empty filter value compares as). */
const FALLBACK_VALUE: Record<ValueKind, string | number> = {
  text: '',
  int: 0,
  float: 0,
  check: 0,
  date: '0001-01-01',
  datetime: '0001-01-01 00:00:00',
  time: '00:00:00',
  json: '',
  table: '',
  none: '',
};

export function fallbackValue(kind: ValueKind): string | number {
  return FALLBACK_VALUE[kind];
}

export function fallbackSql(kind: ValueKind): string {
  return NULL_FALLBACK[kind];
}

/** The column cannot hold NULL: standard NOT NULL columns and the numeric fieldtypes created NOT NULL. */
export function isNotNull(column: ColumnInfo): boolean {
  if (NEVER_NULL.has(column.name) || NOT_NULL_STANDARD.has(column.name)) return true;
  return column.field !== undefined && fieldTypeSpec(column.field.fieldtype).notNull === true;
}

export function isEmptyValue(value: unknown): boolean {
  return value === null || value === undefined || value === '';
}

/** Whether a comparison may use the bare column (Frappe's rules for skipping ifnull). */
export function skipsCoalesce(column: ColumnInfo, operator: string, value?: unknown): boolean {
  if (isNotNull(column)) return true;
  if ((operator === '=' || operator === 'like') && !isEmptyValue(value)) return true;
  if ((operator === '>' || operator === '>=') && DATE_KINDS.has(column.kind)) return true;
  return false;
}

/** `coalesce(expr, fallback)`, or the bare expression when the rules allow. */
export function nullSafe(expr: string, column: ColumnInfo, operator: string, value?: unknown): string {
  return skipsCoalesce(column, operator, value) ? expr : `coalesce(${expr}, ${fallbackSql(column.kind)})`;
}
