import { ident } from '@quire/db';
import { columnSql, doctypeOfPrefix, parseColumnRef, readableColumn, type ColumnSyntax, type TableScope } from './columns';
import { fieldNotPermitted, illegalQuery, selectColumnFirst } from './errors';
import type { SelectList } from './fields';
import type { Joins } from './joins';
import type { QueryScope } from './scope';

/**
 * order_by / group_by (stricter than Frappe): a comma list of column references, order_by items
 * optionally followed by asc|desc. Functions, subqueries, literals and punctuation are refused.
 */

export type Direction = 'ASC' | 'DESC';

export interface SortItem {
  /** Qualified column (`m."col"`) or a quoted output key. */
  readonly expr: string;
  /** True when the item names an output key of `fields`. */
  readonly byKey: boolean;
}

export interface OrderItem extends SortItem {
  readonly direction: Direction;
}

export interface OrderBy {
  readonly items: OrderItem[];
  /** False when the items are the DocType default (they may be dropped where they cannot apply). */
  readonly explicit: boolean;
}

/** ASCII whitespace only: `name\u2003desc` is not an order item. */
const ORDER_ITEM_RE = /^(.+?)(?:[ \t\r\n]+(asc|desc))?$/is;

interface Resolver {
  readonly q: QueryScope;
  readonly joins: Joins;
  /** Output keys usable by name (order_by only). */
  readonly keys: ReadonlySet<string>;
}

function joinedColumn(scope: TableScope, name: string, text: string): string {
  const column = readableColumn(scope, name);
  if (!column) throw fieldNotPermitted(text);
  return columnSql({ scope, column });
}

function byDoctype(r: Resolver, doctype: string, name: string, text: string): string {
  if (doctype === r.q.meta.name) return joinedColumn(r.q.main, name, text);
  const scope = r.joins.ofChildDoctype(doctype);
  if (!scope) throw selectColumnFirst(doctype);
  return joinedColumn(scope, name, text);
}

function byField(r: Resolver, prefix: string, name: string, text: string): string | undefined {
  const target = r.q.tableField(prefix)?.child ?? r.q.linkField(prefix)?.target;
  if (!target) return undefined;
  const scope = r.joins.throughField(prefix);
  if (!scope) throw selectColumnFirst(target.name);
  return joinedColumn(scope, name, text);
}

function resolve(r: Resolver, syntax: ColumnSyntax, text: string): SortItem {
  if (syntax.form === 'plain') {
    const column = readableColumn(r.q.main, syntax.column);
    if (column) return { expr: columnSql({ scope: r.q.main, column }), byKey: false };
    if (r.keys.has(syntax.column)) return { expr: ident(syntax.column), byKey: true };
    throw fieldNotPermitted(text);
  }
  const dotted = `${syntax.prefix}.${syntax.column}`;
  if (r.keys.has(dotted)) return { expr: ident(dotted), byKey: true };
  const viaField = byField(r, syntax.prefix, syntax.column, text);
  if (viaField !== undefined) return { expr: viaField, byKey: false };
  const doctype = doctypeOfPrefix(syntax.prefix);
  if (doctype !== undefined && !r.q.meta.field(syntax.prefix)) return { expr: byDoctype(r, doctype, syntax.column, text), byKey: false };
  throw fieldNotPermitted(text);
}

function resolveText(r: Resolver, text: string): SortItem {
  const syntax = parseColumnRef(text);
  if (!syntax) throw illegalQuery();
  return resolve(r, syntax, text);
}

export function compileGroupBy(list: readonly string[] | undefined, q: QueryScope, joins: Joins): SortItem[] {
  if (!list) return [];
  const r: Resolver = { q, joins, keys: new Set() };
  return list.map((text) => resolveText(r, text));
}

function explicitOrder(list: readonly string[], r: Resolver): OrderItem[] {
  return list.map((text) => {
    const m = ORDER_ITEM_RE.exec(text);
    if (!m) throw illegalQuery();
    const direction = (m[2] ?? 'asc').toUpperCase() as Direction;
    return { ...resolveText(r, (m[1] as string).trim()), direction };
  });
}

/** The DocType default (`sort_field`, itself possibly a comma list); unknown columns are skipped. */
export function defaultOrder(q: QueryScope): OrderItem[] {
  const meta = q.meta;
  const out: OrderItem[] = [];
  for (const part of meta.sortField.split(',')) {
    const [name, dir] = part.trim().split(/\s+/);
    const column = name ? meta.column(name) : undefined;
    if (!column) continue;
    const direction: Direction = dir && /^(asc|desc)$/i.test(dir) ? (dir.toUpperCase() as Direction) : meta.sortOrder;
    out.push({ expr: columnSql({ scope: q.main, column }), byKey: false, direction });
  }
  return out;
}

export function compileOrderBy(list: readonly string[] | undefined, q: QueryScope, joins: Joins, select: SelectList): OrderBy {
  if (!list) return { items: defaultOrder(q), explicit: false };
  const r: Resolver = { q, joins, keys: new Set(select.items.map((i) => i.key)) };
  return { items: explicitOrder(list, r), explicit: true };
}
