import { today as todayUtc } from '@quire/meta';
import { compileFilterConditions } from './filters';
import { FieldCompiler, type SelectList } from './fields';
import { applyGroupingRules } from './grouping';
import { Joins } from './joins';
import { compileGroupBy, compileOrderBy, type OrderItem, type SortItem } from './order';
import { parseAsDict, parseFieldsParam, parseFilterParam, parsePaging, type Paging } from './parse-params';
import { permissionConditions } from './permission';
import { QueryScope } from './scope';
import { Sql, sql } from './sql';
import type { CompileContext, CompiledList, CompiledQuery, ListParams } from './types';

/** One parameterized statement per list request. */

function scopeOf(ctx: Omit<CompileContext, 'maxPageLength'>): QueryScope {
  return new QueryScope(ctx.meta, ctx.tenant, ctx.principal, ctx.today ?? todayUtc());
}

/** filters AND (or_filters) AND permission predicate; `TRUE` when there is none. */
function whereClause(q: QueryScope, params: Pick<ListParams, 'filters' | 'or_filters' | 'parent'>, permission: Sql[]): Sql {
  const filters = parseFilterParam('filters', params.filters);
  const orFilters = parseFilterParam('or_filters', params.or_filters);
  const conditions = [...compileFilterConditions(q, filters, orFilters), ...permission];
  return conditions.length === 0 ? Sql.raw(' WHERE TRUE') : sql` WHERE ${Sql.join(conditions, ' AND ')}`;
}

function selectClause(select: SelectList): Sql {
  const list = select.items.map((i) => i.sql).join(', ');
  return Sql.raw(`SELECT ${select.distinct ? 'DISTINCT ' : ''}${list}`);
}

function groupClause(groupBy: readonly SortItem[]): Sql {
  return groupBy.length === 0 ? Sql.raw('') : Sql.raw(` GROUP BY ${groupBy.map((g) => g.expr).join(', ')}`);
}

function orderClause(order: readonly OrderItem[]): Sql {
  return order.length === 0 ? Sql.raw('') : Sql.raw(` ORDER BY ${order.map((o) => `${o.expr} ${o.direction}`).join(', ')}`);
}

function limitClause(paging: Paging): Sql {
  return sql` LIMIT ${Sql.param(paging.pageLength)} OFFSET ${Sql.param(paging.start)}`;
}

export function compileList(params: ListParams, ctx: CompileContext): CompiledList {
  const q = scopeOf(ctx);
  const permission = permissionConditions(ctx.meta, ctx.tenant, ctx.principal, params.parent);
  const joins = new Joins(q.main);
  const select = new FieldCompiler(q, joins).compile(parseFieldsParam(params.fields));
  const where = whereClause(q, params, permission);
  const groupBy = compileGroupBy(params.group_by, q, joins);
  const order = applyGroupingRules(select, groupBy, compileOrderBy(params.order_by, q, joins, select));
  const paging = parsePaging(params, ctx.maxPageLength);
  const asDict = parseAsDict(params.as_dict);
  const statement = sql`${selectClause(select)} FROM ${Sql.raw(ctx.meta.table)} m${joins.render()}${where}${groupClause(groupBy)}${orderClause(order)}${limitClause(paging)}`;
  return { ...statement.render(), asDict, keys: select.items.map((i) => i.key) };
}

export function compileCount(
  params: Pick<ListParams, 'filters' | 'or_filters' | 'parent'>,
  ctx: Omit<CompileContext, 'maxPageLength'>,
): CompiledQuery {
  const q = scopeOf(ctx);
  const permission = permissionConditions(ctx.meta, ctx.tenant, ctx.principal, params.parent);
  const where = whereClause(q, params, permission);
  return sql`SELECT count(*) AS "count" FROM ${Sql.raw(ctx.meta.table)} m${where}`.render();
}

/** as_dict=false: each row as an array in `keys` order. */
export function rowsToArrays(rows: Record<string, unknown>[], keys: string[]): unknown[][] {
  return rows.map((row) => keys.map((key) => row[key]));
}
