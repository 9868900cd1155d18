import { DataError, ValidationError } from '@quire/errors';
import type { SelectList } from './fields';
import type { OrderBy, OrderItem, SortItem } from './order';

/**
 * Postgres' rules for aggregated and DISTINCT selects, checked up front so a bad combination is a
 * 417 rather than a database error: plain columns of an aggregate query must be grouped, and ORDER
 * BY may only use grouped / selected expressions. The DocType default order is dropped where it
 * cannot apply instead of failing.
 */

function groupedTest(groupBy: readonly SortItem[]): (expr: string) => boolean {
  const grouped = new Set(groupBy.map((g) => g.expr));
  // Grouping by the primary key makes every column of the main table functionally dependent.
  const byMainKey = grouped.has('m."name"');
  return (expr) => grouped.has(expr) || (byMainKey && expr.startsWith('m.'));
}

function checkSelectGrouped(select: SelectList, isGrouped: (expr: string) => boolean): void {
  for (const item of select.items) {
    if (!item.aggregate && !isGrouped(item.expr)) {
      throw new DataError(`Field ${item.key} must be in group_by or used inside an aggregate function`);
    }
  }
}

function keep(order: OrderBy, allowed: (item: OrderItem) => boolean, rule: string): OrderItem[] {
  if (!order.explicit) return order.items.filter(allowed);
  for (const item of order.items) {
    if (!allowed(item)) throw new ValidationError(`order_by ${rule}`);
  }
  return order.items;
}

export function applyGroupingRules(select: SelectList, groupBy: readonly SortItem[], order: OrderBy): OrderItem[] {
  let items = order.items;
  const aggregated = groupBy.length > 0 || select.items.some((i) => i.aggregate);
  if (aggregated) {
    const isGrouped = groupedTest(groupBy);
    checkSelectGrouped(select, isGrouped);
    items = keep({ ...order, items }, (i) => i.byKey || isGrouped(i.expr), 'must use group_by columns or fields aliases in an aggregate query');
  }
  if (select.distinct) {
    const selected = new Set(select.items.map((i) => i.expr));
    items = keep({ ...order, items }, (i) => i.byKey || selected.has(i.expr), 'must use selected columns with distinct');
  }
  return items;
}
