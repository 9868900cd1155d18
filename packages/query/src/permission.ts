import { notPermitted, PermissionError } from '@quire/errors';
import type { Meta, TenantMeta } from '@quire/meta';
import { ownerColumns, readScope, type Principal } from '@quire/permissions';
import { id, Sql, sql } from './sql';

/**
 * The row predicate of a list: which rows the caller may read. Child tables are read through
 * their parent (Frappe's check_parent_permission): `parent` must name a DocType that has a Table
 * field of this child DocType, and the parent's read scope applies.
 */

function parentOf(meta: Meta, tenant: TenantMeta, parent: unknown): Meta {
  const name = typeof parent === 'string' ? parent.trim() : '';
  const parentMeta = name === '' ? undefined : tenant.get(name);
  if (!parentMeta || !parentMeta.tableFields.some((f) => f.options === meta.name)) {
    throw new PermissionError(`Please specify a valid parent DocType for ${meta.name}`, { title: 'Insufficient Permission' });
  }
  return parentMeta;
}

/**
 * The rows of `meta` (aliased `alias`) that are `user`'s for `if_owner` rights, the SQL twin of
 * @quire/permissions' isOwnedBy: `owner` or one of the DocType's owner fields is the user. Each
 * arm is an equality on one column, so an index on it (owner fields may set search_index) serves it.
 */
export function ownedBy(alias: string, meta: Meta, user: string): Sql {
  const arms = ownerColumns(meta).map((column) => sql`${Sql.raw(alias)}.${id(column)} = ${Sql.param(user)}`);
  return arms.length === 1 ? (arms[0] as Sql) : sql`(${Sql.join(arms, ' OR ')})`;
}

function childRows(parent: Meta, principal: Principal, ownOnly: boolean): Sql[] {
  const conditions = [sql`m.${id('parenttype')} = ${Sql.param(parent.name)}`];
  if (ownOnly) {
    conditions.push(
      sql`EXISTS (SELECT 1 FROM ${Sql.raw(parent.table)} p WHERE p.${id('name')} = m.${id('parent')} AND ${ownedBy('p', parent, principal.user)})`,
    );
  }
  return conditions;
}

/** Which rows of a list the caller may read: conditions ANDed into WHERE (possibly none). */
export interface RowPredicate {
  readonly conditions: readonly Sql[];
}

/** The caller's row predicate; throws 403 when the caller may read nothing. */
export function rowPredicate(meta: Meta, tenant: TenantMeta, principal: Principal, parent: unknown): RowPredicate {
  if (meta.istable) {
    const parentMeta = parentOf(meta, tenant, parent);
    const scope = readScope(parentMeta, principal);
    if (scope === false) throw notPermitted('read', parentMeta.name);
    return { conditions: childRows(parentMeta, principal, scope === 'owner') };
  }
  const scope = readScope(meta, principal);
  if (scope === false) throw notPermitted('read', meta.name);
  return { conditions: scope === 'owner' ? [ownedBy('m', meta, principal.user)] : [] };
}
