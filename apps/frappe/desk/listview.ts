import { whitelist, type MethodContext } from '@quire/apps';
import { getList } from '@quire/documents';
import { DataError, ValidationError } from '@quire/errors';
import { permittedLevels } from '@quire/permissions';
import { listStatement } from '@quire/query';
import type { Meta } from '@quire/meta';
import { doctypeArg } from './bulk_messages';
import { readLinkTitles } from './search';

/**
 * frappe.desk.listview.get_group_by_count(doctype, current_filters, field): the list sidebar's
 * counts, as Frappe v15 answers them, a list of `{name, count}`, most first, at most 50:
 *
 * - `assigned_to` (also `_assign`, its newer name): per System User, the ToDos allocated to them
 *   that are not Cancelled and refer to a document of this DocType matching the filters (Frappe
 *   counts ToDos by reference_name alone; here the reference_type must be this DocType too).
 * - `owner` ("Created By"): documents per creator; the caller's own count first when they have any.
 * - any other column the caller may read: documents per value; for a Link to a DocType with
 *   `show_title_field_in_link`, each entry also has the linked document's `title`.
 *
 * Only documents the caller may read are counted: the matching documents come from the list
 * compiler (@quire/query), whose statement carries the caller's row permissions.
 */

const TOP = 50;
/** Frappe reads this many owners before putting the caller first and cutting to 50. */
const OWNERS_READ = 1000;
/** The matching documents an assignment count looks through (the list compiler caps every statement). */
const MATCHING_MAX = 1_000_000;

export interface GroupCount {
  name: unknown;
  count: number;
  title?: unknown;
}

function fieldArg(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new ValidationError('field is required', { title: 'Missing Argument' });
  return value;
}

/** Open (not cancelled) ToDos per System User, on the matching documents. */
async function assignmentCounts(ctx: MethodContext, meta: Meta, filters: unknown): Promise<GroupCount[]> {
  const { meta: tenant, principal } = ctx.doc;
  const matching = listStatement({ fields: ['name'], filters, limit_page_length: 0 }, { meta, tenant, principal, maxPageLength: MATCHING_MAX });
  const todo = tenant.require('ToDo');
  const user = tenant.require('User');
  const col = (m: Meta, name: string): string => {
    const c = m.column(name);
    if (!c) throw new Error(`${m.name} has no column ${name}`);
    return c.sql;
  };
  const values = [...matching.values, meta.name];
  const { rows } = await ctx.doc.db.query<{ name: string; count: string | number }>(
    `SELECT t.${col(todo, 'allocated_to')} AS "name", count(*) AS "count"
       FROM ${todo.table} t JOIN ${user.table} u ON u.${col(user, 'name')} = t.${col(todo, 'allocated_to')}
      WHERE t.${col(todo, 'status')} IS DISTINCT FROM 'Cancelled'
        AND u.${col(user, 'user_type')} = 'System User'
        AND t.${col(todo, 'reference_type')} = $${values.length}
        AND t.${col(todo, 'reference_name')} IN (SELECT matching."name"::text FROM (${matching.text}) AS matching)
      GROUP BY t.${col(todo, 'allocated_to')}
      ORDER BY count(*) DESC, t.${col(todo, 'allocated_to')}
      LIMIT ${TOP}`,
    values,
  );
  return rows.map((r) => ({ name: r.name, count: Number(r.count) }));
}

/** The linked documents' titles, when the linked DocType shows titles in links and the caller may read it. */
async function addLinkTitles(ctx: MethodContext, meta: Meta, field: string, counts: GroupCount[]): Promise<void> {
  const df = meta.field(field);
  const target = df?.fieldtype === 'Link' && df.options ? ctx.doc.meta.get(df.options) : undefined;
  if (!target) return;
  const titles = await readLinkTitles(
    ctx.doc,
    target,
    counts.map((c) => c.name),
  );
  for (const c of counts) if (titles.has(String(c.name))) c.title = titles.get(String(c.name));
}

/** Documents per value of `field` among the matching ones (owner: the caller first). */
async function valueCounts(ctx: MethodContext, meta: Meta, field: string, filters: unknown): Promise<GroupCount[]> {
  if (!meta.hasColumn(field) || permittedLevels(meta, ctx.doc.principal).hidden.has(field)) {
    throw new DataError(`Field not permitted in query: ${field}`, { title: 'Invalid Field' });
  }
  const owner = field === 'owner';
  const read = owner ? OWNERS_READ : TOP;
  const rows = (await getList(
    ctx.doc,
    meta.name,
    { fields: ['count(*) as count', `${field} as name`], filters, group_by: field, order_by: 'count desc', limit_page_length: read },
    read,
  )) as Array<{ name: unknown; count: unknown }>;
  let counts: GroupCount[] = rows.map((r) => ({ name: r.name, count: Number(r.count) }));
  if (owner) {
    const mine = counts.findIndex((c) => c.name === ctx.doc.principal.user);
    if (mine > 0) counts = [counts[mine] as GroupCount, ...counts.slice(0, mine), ...counts.slice(mine + 1)];
  }
  counts = counts.slice(0, TOP);
  await addLinkTitles(ctx, meta, field, counts);
  return counts;
}

export const get_group_by_count = whitelist(
  async (args, ctx) => {
    const meta = ctx.doc.meta.require(doctypeArg(args.doctype));
    const field = fieldArg(args.field);
    const filters = args.current_filters === '' ? undefined : args.current_filters;
    if (meta.issingle || meta.isVirtual) return [];
    if (field === 'assigned_to' || field === '_assign') return assignmentCounts(ctx, meta, filters);
    return valueCounts(ctx, meta, field, filters);
  },
  { methods: ['GET', 'POST'], allowScopedTokens: true },
);
