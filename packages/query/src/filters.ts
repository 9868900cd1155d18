import type { ColumnInfo, Meta } from '@quire/meta';
import { doctypeOfPrefix, parseColumnRef, readableColumn, type TableScope } from './columns';
import { fieldNotPermitted } from './errors';
import { operandOf } from './operand';
import { compileCondition, normalizeOperator } from './operators';
import type { FilterSpec } from './types';
import type { QueryScope } from './scope';
import { id, Sql, sql } from './sql';

/**
 * filters / or_filters → conditions. A condition on a child DocType becomes an EXISTS over the
 * child table, so parent rows are never duplicated.
 */

/** Alias of the child table inside an EXISTS. */
const CHILD_ALIAS = 'c';

/** Where a filter's column lives. */
interface FilterTarget {
  readonly column: ColumnInfo;
  readonly scope: TableScope;
  /** Set when the column is in a child table: the condition goes inside EXISTS. */
  readonly child?: { readonly parentfield: string | undefined };
}

function columnIn(scope: TableScope, name: string, shownAs: string): ColumnInfo {
  const column = readableColumn(scope, name);
  if (!column) throw fieldNotPermitted(shownAs);
  return column;
}

function mainTarget(q: QueryScope, name: string, shownAs: string): FilterTarget {
  return { column: columnIn(q.main, name, shownAs), scope: q.main };
}

function childTarget(q: QueryScope, child: Meta, parentfield: string | undefined, name: string, shownAs: string): FilterTarget {
  const scope = q.childScope(child, CHILD_ALIAS);
  return { column: columnIn(scope, name, shownAs), scope, child: { parentfield } };
}

/** `tab<DocType>`: this DocType or a child DocType of one of its Table fields. */
function doctypeTarget(q: QueryScope, doctype: string, name: string, shownAs: string): FilterTarget {
  if (doctype === q.meta.name) return mainTarget(q, name, shownAs);
  const table = q.tableFieldFor(doctype);
  if (!table) throw fieldNotPermitted(shownAs);
  return childTarget(q, table.child, undefined, name, shownAs);
}

function resolveTarget(q: QueryScope, spec: FilterSpec): FilterTarget {
  const shownAs = spec.doctype === undefined ? spec.field : `${spec.doctype}.${spec.field}`;
  const syntax = parseColumnRef(spec.field);
  if (!syntax) throw fieldNotPermitted(shownAs);
  if (spec.doctype !== undefined) {
    if (syntax.form !== 'plain') throw fieldNotPermitted(shownAs);
    return doctypeTarget(q, spec.doctype, syntax.column, shownAs);
  }
  if (syntax.form === 'plain') return mainTarget(q, syntax.column, shownAs);
  const table = q.tableField(syntax.prefix);
  if (table) {
    if (q.main.hidden.has(syntax.prefix)) throw fieldNotPermitted(shownAs);
    return childTarget(q, table.child, table.field.fieldname, syntax.column, shownAs);
  }
  const doctype = doctypeOfPrefix(syntax.prefix);
  if (doctype !== undefined && !q.meta.field(syntax.prefix)) return doctypeTarget(q, doctype, syntax.column, shownAs);
  throw fieldNotPermitted(shownAs);
}

function inChildTable(q: QueryScope, target: FilterTarget, condition: Sql): Sql {
  const c = Sql.raw(target.scope.alias);
  const m = Sql.raw(q.main.alias);
  const parentfield = target.child?.parentfield;
  const byField = parentfield === undefined ? Sql.raw('') : sql` AND ${c}.${id('parentfield')} = ${Sql.param(parentfield)}`;
  return sql`EXISTS (SELECT 1 FROM ${Sql.raw(target.scope.meta.table)} ${c} WHERE ${c}.${id('parent')} = ${m}.${id('name')} AND ${c}.${id('parenttype')} = ${Sql.param(q.meta.name)}${byField} AND ${condition})`;
}

export function compileFilter(q: QueryScope, spec: FilterSpec): Sql {
  const operator = normalizeOperator(spec.operator);
  const target = resolveTarget(q, spec);
  const operand = operandOf(target.scope.alias, target.column, target.scope.meta);
  const condition = compileCondition(operator, operand, spec.value, { tenant: q.tenant, today: q.today });
  return target.child ? inChildTable(q, target, condition) : condition;
}

/** `filters` ANDed, then `(or1 OR or2 …)`; empty lists contribute nothing. */
export function compileFilterConditions(q: QueryScope, filters: readonly FilterSpec[], orFilters: readonly FilterSpec[]): Sql[] {
  const conditions = filters.map((f) => compileFilter(q, f));
  if (orFilters.length > 0)
    conditions.push(
      sql`(${Sql.join(
        orFilters.map((f) => compileFilter(q, f)),
        ' OR ',
      )})`,
    );
  return conditions;
}
