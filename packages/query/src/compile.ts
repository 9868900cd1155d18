import { today as todayUtc } from '@quire/meta';
import { compileFilterConditions } from './filters';
import { FieldCompiler, type SelectList } from './fields';
import { applyGroupingRules } from './grouping';
import { Joins } from './joins';
import { compileGroupBy, compileOrderBy, type OrderItem, type SortItem } from './order';
import { cappedPageLength, parseListRequest, type Paging } from './parse-params';
import { rowPredicate, type RowPredicate } from './permission';
import { QueryScope } from './scope';
import { Sql, sql } from './sql';
import type { CompileContext, CompileRequestContext, CompiledList, CompiledQuery, ListParams, ListRequest } from './types';

/** One parameterized statement per list request. */

function scopeOf(ctx: Omit<CompileContext, 'maxPageLength'>): QueryScope {
  return new QueryScope(ctx.meta, ctx.tenant, ctx.principal, ctx.today ?? todayUtc());
}

/** filters AND (or_filters) AND permission predicate; `TRUE` when there is none. */
function whereClause(q: QueryScope, request: Pick<ListRequest, 'filters' | 'orFilters'>, rows: RowPredicate): Sql {
  const conditions = [...compileFilterConditions(q, request.filters, request.orFilters), ...rows.conditions];
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

/**
 * A list as a caller asks for it: who may read which rows is decided first (a caller who may read
 * nothing gets its 403 before anything in the request is looked at), then the raw parameters are
 * parsed once into a ListRequest, then compiled.
 */
export function listStatement(params: ListParams, ctx: CompileContext): CompiledList {
  const rows = rowPredicate(ctx.meta, ctx.tenant, ctx.principal, params.parent);
  return compileList(parseListRequest(params), { ...ctx, rows });
}

/** The count a list with these filters would have (frappe.client.get_count). */
export function countStatement(params: Pick<ListParams, 'filters' | 'or_filters' | 'parent'>, ctx: Omit<CompileContext, 'maxPageLength'>): CompiledQuery {
  const rows = rowPredicate(ctx.meta, ctx.tenant, ctx.principal, params.parent);
  return compileCount(parseListRequest(params), { ...ctx, rows });
}

export function compileList(request: ListRequest, ctx: CompileRequestContext): CompiledList {
  const q = scopeOf(ctx);
  const joins = new Joins(q.main);
  const select = new FieldCompiler(q, joins).compile(request.fields);
  const where = whereClause(q, request, ctx.rows);
  const groupBy = compileGroupBy(request.groupBy, q, joins);
  const order = applyGroupingRules(select, groupBy, compileOrderBy(request.orderBy, q, joins, select));
  const paging: Paging = { start: request.start, pageLength: cappedPageLength(request.pageLength, ctx.maxPageLength) };
  const statement = sql`${selectClause(select)} FROM ${Sql.raw(ctx.meta.table)} m${joins.render()}${where}${groupClause(groupBy)}${orderClause(order)}${limitClause(paging)}`;
  return { ...statement.render(), asDict: request.asDict, keys: select.items.map((i) => i.key) };
}

export function compileCount(request: Pick<ListRequest, 'filters' | 'orFilters'>, ctx: Omit<CompileRequestContext, 'maxPageLength'>): CompiledQuery {
  const q = scopeOf(ctx);
  const where = whereClause(q, request, ctx.rows);
  return sql`SELECT count(*) AS "count" FROM ${Sql.raw(ctx.meta.table)} m${where}`.render();
}

/** as_dict=false: each row as an array in `keys` order. */
export function rowsToArrays(rows: Record<string, unknown>[], keys: string[]): unknown[][] {
  return rows.map((row) => keys.map((key) => row[key]));
}
