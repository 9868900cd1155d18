import { coerceFilterValue, PARAM_CAST, type ColumnInfo, type TenantMeta } from '@quire/meta';
import { fieldOf } from './columns';
import { invalidParam, shown } from './errors';
import { fallbackSql, fallbackValue, isNotNull, nullSafe } from './nulls';
import type { Operand } from './operand';
import { Sql, sql } from './sql';
import { periodTimespan, timespanRange, type DateRange } from './timespan';
import { treeCondition, TREE_OPERATORS, type TreeOperator } from './tree';

/** Filter operators (DatabaseQuery.prepare_filter_condition), compiled to one SQL condition each. */

export type Operator =
  '=' | '!=' | '>' | '<' | '>=' | '<=' | 'like' | 'not like' | 'in' | 'not in' | 'is' | 'between' | 'timespan' | 'previous' | 'next' | TreeOperator;

/** Every operator a filter may name, canonical spelling (`<>` is also read, as `!=`). */
export const FILTER_OPERATORS: readonly Operator[] = [
  '=',
  '!=',
  '>',
  '<',
  '>=',
  '<=',
  'like',
  'not like',
  'in',
  'not in',
  'is',
  'between',
  'timespan',
  'previous',
  'next',
  ...(TREE_OPERATORS as ReadonlySet<TreeOperator>),
];

const OPERATORS: ReadonlySet<string> = new Set<string>(FILTER_OPERATORS);

const OPERATOR_LIST =
  '=, !=, >, <, >=, <=, like, not like, in, not in, is, between, timespan, previous, next, ancestors of, descendants of, not ancestors of, not descendants of, descendants of (inclusive)';

export function normalizeOperator(text: string): Operator {
  const op = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const canonical = op === '<>' ? '!=' : op;
  if (!OPERATORS.has(canonical)) throw invalidParam(`Operator must be one of ${OPERATOR_LIST}`);
  return canonical as Operator;
}

export interface OperatorEnv {
  readonly tenant: TenantMeta;
  readonly today: string;
}

const COMPARISON_SQL: Readonly<Record<string, string>> = { '=': '=', '!=': '<>', '>': '>', '<': '<', '>=': '>=', '<=': '<=' };

const isCompound = (value: unknown): boolean => typeof value === 'object' && value !== null;

function needScalar(operator: string, operand: Operand, value: unknown): void {
  if (isCompound(value)) throw invalidParam(`Operator ${operator} needs a single value for ${operand.column.name}, got ${shown(value)}`);
}

/** The value as stored in the column (null for an empty date/time value). */
function stored(column: ColumnInfo, value: unknown): unknown {
  return coerceFilterValue(column.kind, fieldOf(column), value);
}

/** The value as stored in the column; empty values compare as the NULL fallback. */
function coerced(column: ColumnInfo, value: unknown): unknown {
  const v = stored(column, value);
  return v === null || v === undefined ? fallbackValue(column.kind) : v;
}

function bind(column: ColumnInfo, value: unknown): Sql {
  return Sql.param(value, PARAM_CAST[column.kind]);
}

function comparison(operator: string, operand: Operand, value: unknown): Sql {
  needScalar(operator, operand, value);
  const v = stored(operand.column, value);
  const left = nullSafe(operand.expr, operand.column, operator, v);
  const bound = v === null || v === undefined ? fallbackValue(operand.column.kind) : v;
  return sql`${Sql.raw(left)} ${Sql.raw(COMPARISON_SQL[operator] as string)} ${bind(operand.column, bound)}`;
}

function like(operator: 'like' | 'not like', operand: Operand, value: unknown): Sql {
  needScalar(operator, operand, value);
  const pattern = coerceFilterValue('text', fieldOf(operand.column), value) ?? '';
  let left = nullSafe(operand.expr, operand.column, operator, pattern);
  if (operand.column.kind !== 'text' && operand.column.kind !== 'json') left = `${left}::text`;
  return sql`${Sql.raw(left)} ${Sql.raw(operator === 'like' ? 'ILIKE' : 'NOT ILIKE')} ${Sql.param(pattern, 'text')}`;
}

function listItems(operand: Operand, value: unknown): unknown[] {
  const items = Array.isArray(value) ? (value as unknown[]) : typeof value === 'string' ? value.split(',') : [value];
  const column = operand.column;
  const values = items.map((item) => {
    if (isCompound(item)) throw invalidParam(`Invalid value in list for ${column.name}: ${shown(item)}`);
    return coerced(column, typeof item === 'string' ? item.trim() : item);
  });
  return values.length === 0 ? [fallbackValue(column.kind)] : values;
}

function inList(operator: 'in' | 'not in', operand: Operand, value: unknown): Sql {
  if (value === null || value === undefined) return Sql.raw(operator === 'in' ? 'false' : 'true');
  if (isCompound(value) && !Array.isArray(value)) throw invalidParam(`Operator ${operator} needs a list for ${operand.column.name}`);
  const values = listItems(operand, value);
  const left = nullSafe(operand.expr, operand.column, operator);
  const array = Sql.param(values, `${PARAM_CAST[operand.column.kind]}[]`);
  return operator === 'in' ? sql`${Sql.raw(left)} = ANY(${array})` : sql`${Sql.raw(left)} <> ALL(${array})`;
}

function isSet(operand: Operand, value: unknown): Sql {
  const which = typeof value === 'string' ? value.trim().toLowerCase().replace(/\s+/g, ' ') : undefined;
  if (which !== 'set' && which !== 'not set') throw invalidParam(`Value for operator "is" must be "set" or "not set", got ${shown(value)}`);
  const { column, expr } = operand;
  const left = isNotNull(column) ? expr : `coalesce(${expr}, ${fallbackSql(column.kind)})`;
  return Sql.raw(`${left} ${which === 'set' ? '<>' : '='} ${fallbackSql(column.kind)}`);
}

// ---------------------------------------------------------------------------------------------
// between / timespan

const DATE_ONLY_RE = /^\s*\d{4}-\d{1,2}-\d{1,2}\s*$/;

function dateBound(operand: Operand, value: unknown, today: string, end: boolean): unknown {
  const { column } = operand;
  const blank = value === null || value === undefined || value === '';
  if (column.kind === 'date') return blank ? today : coerced(column, value);
  if (blank) return `${today} ${end ? '23:59:59.999999' : '00:00:00'}`;
  if (typeof value === 'string' && DATE_ONLY_RE.test(value)) {
    const day = coerceFilterValue('date', fieldOf(column), value) as string;
    return `${day} ${end ? '23:59:59.999999' : '00:00:00'}`;
  }
  return coerced(column, value);
}

function bounds(operand: Operand, value: unknown, today: string): [unknown, unknown] {
  if (!Array.isArray(value) || value.length > 2) {
    throw invalidParam(`Operator between needs a list [from, to] for ${operand.column.name}, got ${shown(value)}`);
  }
  const [from, to] = value as unknown[];
  for (const v of [from, to]) needScalar('between', operand, v);
  const kind = operand.column.kind;
  if (kind === 'date' || kind === 'datetime') return [dateBound(operand, from, today, false), dateBound(operand, to, today, true)];
  return [coerced(operand.column, from), coerced(operand.column, to)];
}

function betweenValues(operand: Operand, from: unknown, to: unknown): Sql {
  const left = nullSafe(operand.expr, operand.column, 'between');
  return sql`${Sql.raw(left)} BETWEEN ${bind(operand.column, from)} AND ${bind(operand.column, to)}`;
}

function dateRange(operator: string, operand: Operand, range: DateRange): Sql {
  const kind = operand.column.kind;
  if (kind !== 'date' && kind !== 'datetime') {
    throw invalidParam(`Operator ${operator} needs a Date or Datetime field, ${operand.column.name} is not`);
  }
  const [from, to] = range;
  return kind === 'date' ? betweenValues(operand, from, to) : betweenValues(operand, `${from} 00:00:00`, `${to} 23:59:59.999999`);
}

// ---------------------------------------------------------------------------------------------

export function compileCondition(operator: Operator, operand: Operand, value: unknown, env: OperatorEnv): Sql {
  switch (operator) {
    case '=':
    case '!=':
    case '>':
    case '<':
    case '>=':
    case '<=':
      return comparison(operator, operand, value);
    case 'like':
    case 'not like':
      return like(operator, operand, value);
    case 'in':
    case 'not in':
      return inList(operator, operand, value);
    case 'is':
      return isSet(operand, value);
    case 'between': {
      const [from, to] = bounds(operand, value, env.today);
      return betweenValues(operand, from, to);
    }
    case 'timespan':
      return dateRange(operator, operand, timespanRange(value, env.today));
    case 'previous':
    case 'next':
      return dateRange(operator, operand, timespanRange(periodTimespan(operator, value), env.today));
    default:
      return treeCondition(operator, operand, value, env.tenant);
  }
}
