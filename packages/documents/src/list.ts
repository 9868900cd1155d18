import { ValidationError } from '@quire/errors';
import { today, type Meta, type TenantMeta } from '@quire/meta';
import type { Principal } from '@quire/permissions';
import { countStatement, listStatement, rowsToArrays, type CompiledList, type ListParams } from '@quire/query';
import { LRUCache } from 'lru-cache';
import type { DocContext } from './context';
import { virtualOf } from './virtual';

/**
 * Compiled lists by request shape, per tenant metadata (new metadata, new cache): the same query
 * string from the same caller on the same day compiles to the same statement, so the JSON of
 * fields and filters is parsed and compiled once. What a statement depends on is all in the key:
 * the raw parameters, the caller (user, roles, scopes: the permission predicate), the date
 * (timespan filters), the page cap. Parameters that are not plain strings (a JSON body) compile
 * every time.
 */
const compiled = new WeakMap<TenantMeta, LRUCache<string, CompiledList>>();
const SHAPES_PER_TENANT = 500;

function compiledList(tenant: TenantMeta, meta: Meta, principal: Principal, params: ListParams, maxPageLength: number): CompiledList {
  const day = today();
  const key = shapeKey(meta, principal, params, day, maxPageLength);
  if (key === undefined) return listStatement(params, { meta, tenant, principal, maxPageLength, today: day });
  let shapes = compiled.get(tenant);
  if (!shapes) compiled.set(tenant, (shapes = new LRUCache({ max: SHAPES_PER_TENANT })));
  let statement = shapes.get(key);
  if (!statement) {
    statement = listStatement(params, { meta, tenant, principal, maxPageLength, today: day });
    shapes.set(key, statement);
  }
  return statement;
}

function shapeKey(meta: Meta, principal: Principal, params: ListParams, day: string, maxPageLength: number): string | undefined {
  for (const value of Object.values(params)) if (value !== undefined && typeof value !== 'string') return undefined;
  return `${meta.name}\0${principal.user}\0${principal.rolesKey}\0${day}\0${maxPageLength}\0${JSON.stringify(params)}`;
}

/**
 * Lists (GET /api/resource/<DocType>, frappe.client.get_list): one parameterized statement. The raw
 * parameters are parsed once by the query package, after the caller's read permission is settled.
 */
export async function getList(ctx: DocContext, doctype: string, params: ListParams, maxPageLength: number): Promise<unknown[]> {
  const meta = ctx.meta.require(doctype);
  if (meta.isVirtual) return virtualOf(ctx, meta, 'read').getList(ctx, params, maxPageLength);
  if (meta.issingle)
    throw new ValidationError(`${meta.name} is a Single DocType: read it at /api/resource/${meta.name}/${meta.name}`, { title: 'Single DocType' });
  const statement = compiledList(ctx.meta, meta, ctx.principal, params, maxPageLength);
  const { rows } = await ctx.db.query<Record<string, unknown>>(statement.text, statement.values, { prepare: true });
  return statement.asDict ? rows : rowsToArrays(rows, statement.keys);
}

/** The number of rows a list with these filters would return, permission predicate included. */
export async function getCount(ctx: DocContext, doctype: string, params: Pick<ListParams, 'filters' | 'or_filters' | 'parent'>): Promise<number> {
  const meta = ctx.meta.require(doctype);
  if (meta.isVirtual) return virtualOf(ctx, meta, 'read').getCount(ctx, params);
  if (meta.issingle) return 1;
  const compiled = countStatement(params, { meta, tenant: ctx.meta, principal: ctx.principal });
  const { rows } = await ctx.db.query<{ count: number | string }>(compiled.text, compiled.values, { prepare: true });
  return Number(rows[0]?.count ?? 0);
}
