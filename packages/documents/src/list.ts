import { ValidationError } from '@quire/errors';
import { countStatement, listStatement, rowsToArrays, type ListParams } from '@quire/query';
import type { DocContext } from './context';

/**
 * Lists (GET /api/resource/<DocType>, frappe.client.get_list): one parameterized statement. The raw
 * parameters are parsed once by the query package, after the caller's read permission is settled.
 */
export async function getList(ctx: DocContext, doctype: string, params: ListParams, maxPageLength: number): Promise<unknown[]> {
  const meta = ctx.meta.require(doctype);
  if (meta.issingle)
    throw new ValidationError(`${meta.name} is a Single DocType: read it at /api/resource/${meta.name}/${meta.name}`, { title: 'Single DocType' });
  const compiled = listStatement(params, { meta, tenant: ctx.meta, principal: ctx.principal, maxPageLength });
  const { rows } = await ctx.db.query<Record<string, unknown>>(compiled.text, compiled.values, { prepare: true });
  return compiled.asDict ? rows : rowsToArrays(rows, compiled.keys);
}

/** The number of rows a list with these filters would return, permission predicate included. */
export async function getCount(ctx: DocContext, doctype: string, params: Pick<ListParams, 'filters' | 'or_filters' | 'parent'>): Promise<number> {
  const meta = ctx.meta.require(doctype);
  if (meta.issingle) return 1;
  const compiled = countStatement(params, { meta, tenant: ctx.meta, principal: ctx.principal });
  const { rows } = await ctx.db.query<{ count: number | string }>(compiled.text, compiled.values, { prepare: true });
  return Number(rows[0]?.count ?? 0);
}
