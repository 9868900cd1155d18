import { ident } from '@quire/db';
import { PARAM_CAST, type Meta, type TenantMeta } from '@quire/meta';
import { invalidParam, shown } from './errors';
import type { Operand } from './operand';
import { Sql, sql } from './sql';

/**
 * Tree operators over the parent column of a tree DocType (`nsm_parent_field`), as recursive CTEs
 * inside the one statement. UNION (not UNION ALL) keeps a cyclic tree from recursing forever.
 */

export type TreeOperator = 'descendants of' | 'descendants of (inclusive)' | 'not descendants of' | 'ancestors of' | 'not ancestors of';

export const TREE_OPERATORS: ReadonlySet<string> = new Set<TreeOperator>([
  'descendants of',
  'descendants of (inclusive)',
  'not descendants of',
  'ancestors of',
  'not ancestors of',
]);

/** The tree DocType a column points into: `name` of a tree DocType, or a Link to one. */
function treeOf(operand: Operand, tenant: TenantMeta): Meta | undefined {
  if (operand.column.name === 'name' && operand.meta.isTree) return operand.meta;
  const field = operand.column.field;
  if (field?.fieldtype !== 'Link' || !field.options) return undefined;
  const target = field.options === operand.meta.name ? operand.meta : tenant.get(field.options);
  return target?.isTree ? target : undefined;
}

function parentColumn(tree: Meta): string {
  const field = tree.definition.nsm_parent_field ?? `parent_${tree.name.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`;
  return ident(field);
}

function nodeName(operator: string, value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw invalidParam(`Operator ${operator} needs a single node name, got ${shown(value)}`);
}

/** The names below a node (or the node and below it). */
function descendants(tree: Meta, node: Sql, inclusive: boolean): Sql {
  const table = Sql.raw(tree.table);
  const pc = Sql.raw(parentColumn(tree));
  const anchor = inclusive ? sql`t."name" = ${node}` : sql`t.${pc} = ${node}`;
  return sql`WITH RECURSIVE _tree(name) AS (SELECT t."name" FROM ${table} t WHERE ${anchor} UNION SELECT t."name" FROM ${table} t JOIN _tree ON t.${pc} = _tree.name) SELECT name FROM _tree`;
}

/** The names above a node. */
function ancestors(tree: Meta, node: Sql): Sql {
  const table = Sql.raw(tree.table);
  const pc = Sql.raw(parentColumn(tree));
  return sql`WITH RECURSIVE _tree(name) AS (SELECT t.${pc} FROM ${table} t WHERE t."name" = ${node} UNION SELECT t.${pc} FROM ${table} t JOIN _tree ON t."name" = _tree.name) SELECT name FROM _tree WHERE name IS NOT NULL AND name <> ''`;
}

export function treeCondition(operator: TreeOperator, operand: Operand, value: unknown, tenant: TenantMeta): Sql {
  const tree = treeOf(operand, tenant);
  if (!tree) throw invalidParam(`Operator ${operator} needs a tree DocType: ${operand.column.name} is not a tree field`);
  const cast = PARAM_CAST[tree.column('name')?.kind ?? 'text'];
  const node = Sql.param(nodeName(operator, value), cast);
  const subquery = operator.includes('ancestors') ? ancestors(tree, node) : descendants(tree, node, operator === 'descendants of (inclusive)');
  const left = operand.column.name === 'name' ? operand.expr : `coalesce(${operand.expr}, '')`;
  const negated = operator.startsWith('not ');
  return sql`${Sql.raw(left)} ${Sql.raw(negated ? 'NOT IN' : 'IN')} (${subquery})`;
}
