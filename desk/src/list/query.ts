import type { Filter } from 'frappe-react-sdk';

/**
 * A list view's state, kept in the URL (`?filters=…&order_by=…&page=…`) so a filtered, sorted
 * page survives a reload and can be shared.
 */

export const OPERATORS = ['=', '!=', 'like', 'not like', '>', '<', '>=', '<=', 'in', 'not in', 'is set', 'is not set'] as const;
export type Operator = (typeof OPERATORS)[number];

export interface FilterRow {
  field: string;
  operator: Operator;
  value: string;
}

export interface ListState {
  filters: FilterRow[];
  sortField: string;
  sortOrder: 'asc' | 'desc';
  page: number;
  pageSize: number;
}

export const PAGE_SIZES = [20, 100, 500] as const;

function isOperator(value: unknown): value is Operator {
  return typeof value === 'string' && (OPERATORS as readonly string[]).includes(value);
}

function parseFilters(raw: string | null): FilterRow[] {
  if (!raw) return [];
  try {
    const list: unknown = JSON.parse(raw);
    if (!Array.isArray(list)) return [];
    return list.flatMap((item: unknown): FilterRow[] => {
      if (!Array.isArray(item) || typeof item[0] !== 'string' || !isOperator(item[1])) return [];
      return [{ field: item[0], operator: item[1], value: typeof item[2] === 'string' ? item[2] : '' }];
    });
  } catch {
    return [];
  }
}

/**
 * The state in the URL; what the URL leaves out comes from `defaults` (the user's saved list
 * settings, then the DocType's sort).
 */
export function readListState(
  params: URLSearchParams,
  defaults: { sortField: string; sortOrder: 'asc' | 'desc'; pageSize?: number | undefined; filters?: FilterRow[] | undefined },
): ListState {
  const [field, order] = (params.get('order_by') ?? '').split(' ');
  const page = Number(params.get('page') ?? '1');
  const size = Number(params.get('page_length') ?? defaults.pageSize ?? PAGE_SIZES[0]);
  return {
    filters: params.has('filters') ? parseFilters(params.get('filters')) : (defaults.filters ?? []),
    sortField: field || defaults.sortField,
    sortOrder: order === 'asc' || order === 'desc' ? order : defaults.sortOrder,
    page: Number.isInteger(page) && page > 0 ? page : 1,
    pageSize: (PAGE_SIZES as readonly number[]).includes(size) ? size : PAGE_SIZES[0],
  };
}

export function writeListState(state: ListState): URLSearchParams {
  const params = new URLSearchParams();
  // Always written (even empty): a URL without filters means "the user's saved ones".
  params.set('filters', JSON.stringify(state.filters.map((f) => [f.field, f.operator, f.value])));
  params.set('order_by', `${state.sortField} ${state.sortOrder}`);
  if (state.page > 1) params.set('page', String(state.page));
  params.set('page_length', String(state.pageSize));
  return params;
}

/** A filter row as the list API takes it (Frappe's operators; `like` gets its wildcards). */
export function toApiFilter(row: FilterRow): Filter {
  const value = row.value.trim();
  let tuple: [string, string, unknown];
  switch (row.operator) {
    case 'is set':
      tuple = [row.field, 'is', 'set'];
      break;
    case 'is not set':
      tuple = [row.field, 'is', 'not set'];
      break;
    case 'in':
    case 'not in':
      tuple = [
        row.field,
        row.operator,
        value
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      ];
      break;
    case 'like':
    case 'not like':
      tuple = [row.field, row.operator, value.includes('%') ? value : `%${value}%`];
      break;
    default:
      tuple = [row.field, row.operator, value];
  }
  // The SDK's Filter type lists fewer operators than Frappe's list API takes.
  return tuple as unknown as Filter;
}

export function needsValue(operator: Operator): boolean {
  return operator !== 'is set' && operator !== 'is not set';
}
