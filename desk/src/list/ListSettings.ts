import { useFrappeGetCall, useFrappePostCall } from 'frappe-react-sdk';
import { useCallback, useRef } from 'react';
import { PAGE_SIZES, type FilterRow, type Operator, OPERATORS } from './query';

/**
 * A user's list settings per DocType, kept where Frappe's desk keeps them: `__UserSettings`
 * through frappe.model.utils.user_settings.get/save, as JSON text of the shape Frappe's list view
 * saves (base_list.js get_view_settings):
 * `{"List": {"fields": [[fieldname, doctype], …], "filters": [[doctype, field, op, value, hidden], …],
 *  "order_by": "`tabToDo`.`modified` desc", "page_length": 20}}`.
 * The server merges at the top level, so the whole `List` object is sent on each change.
 */

export interface ListSettings {
  /** The chosen columns, in order; undefined when the user never chose (the DocType's defaults). */
  columns?: string[];
  sortField?: string;
  sortOrder?: 'asc' | 'desc';
  pageSize?: number;
  filters?: FilterRow[];
}

type Json = Record<string, unknown>;

const ORDER_BY = /^(?:`?tab[^`.]+`?\.)?`?([A-Za-z_][A-Za-z0-9_]*)`?\s+(asc|desc)$/i;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A filter value as the filter bar edits it (numbers and text; anything else is dropped). */
function scalarText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

function filterOf(item: unknown): FilterRow[] {
  if (!Array.isArray(item)) return [];
  // Frappe's form [doctype, field, op, value, hidden] or the short [field, op, value].
  const [field, op, value] = item.length >= 4 ? (item.slice(1) as unknown[]) : (item as unknown[]);
  const operator = typeof op === 'string' && op === 'is' ? (value === 'set' ? 'is set' : 'is not set') : op;
  if (typeof field !== 'string' || typeof operator !== 'string' || !(OPERATORS as readonly string[]).includes(operator)) return [];
  const shown = Array.isArray(value) ? value.map((v) => scalarText(v)).join(', ') : operator.startsWith('is') ? '' : scalarText(value);
  return [{ field, operator: operator as Operator, value: operator.includes('like') ? shown.replace(/^%|%$/g, '') : shown }];
}

/** The `List` part of the stored settings, read leniently (Frappe's own writes have other keys too). */
export function parseListSettings(stored: string | undefined): ListSettings {
  if (!stored) return {};
  let all: unknown;
  try {
    all = JSON.parse(stored);
  } catch {
    return {};
  }
  const list = isObject(all) && isObject(all.List) ? all.List : {};
  const settings: ListSettings = {};
  if (Array.isArray(list.fields)) {
    settings.columns = list.fields.flatMap((f: unknown) => {
      const name = Array.isArray(f) ? (f as unknown[])[0] : f;
      return typeof name === 'string' && name !== '' ? [name] : [];
    });
  }
  const order = typeof list.order_by === 'string' ? ORDER_BY.exec(list.order_by.trim()) : null;
  if (order?.[1] && order[2]) {
    settings.sortField = order[1];
    settings.sortOrder = order[2].toLowerCase() === 'asc' ? 'asc' : 'desc';
  }
  const size = Number(list.page_length);
  if ((PAGE_SIZES as readonly number[]).includes(size)) settings.pageSize = size;
  if (Array.isArray(list.filters)) settings.filters = list.filters.flatMap(filterOf);
  return settings;
}

/** Frappe's `List` object for these settings. */
export function listSettingsJson(doctype: string, s: ListSettings): Json {
  const out: Json = {};
  if (s.columns) out.fields = s.columns.map((c) => [c, doctype]);
  if (s.sortField) out.order_by = `\`tab${doctype}\`.\`${s.sortField}\` ${s.sortOrder ?? 'desc'}`;
  if (s.pageSize) out.page_length = s.pageSize;
  if (s.filters) {
    out.filters = s.filters.map((f) => {
      if (f.operator === 'is set' || f.operator === 'is not set') return [doctype, f.field, 'is', f.operator === 'is set' ? 'set' : 'not set', false];
      return [doctype, f.field, f.operator, f.value, false];
    });
  }
  return out;
}

/**
 * The user's settings for a DocType's list: `loaded` once the server answered (a failure counts
 * as "nothing stored": the list must not wait on its preferences), and `save`, which merges a
 * change into what is known and stores the whole.
 */
export function useListSettings(doctype: string) {
  const res = useFrappeGetCall<{ message?: string }>('frappe.model.utils.user_settings.get', { doctype }, `user-settings:${doctype}`, {
    revalidateOnFocus: false,
    revalidateIfStale: false,
    shouldRetryOnError: false,
  });
  const { call } = useFrappePostCall('frappe.model.utils.user_settings.save');
  const loaded = res.data !== undefined || res.error !== undefined;
  const settings = parseListSettings(res.data?.message);
  // The latest settings, so that two quick changes do not each start from a stale copy.
  const latest = useRef<ListSettings | undefined>(undefined);
  if (latest.current === undefined && loaded) latest.current = settings;
  const { mutate } = res;

  const save = useCallback(
    (change: ListSettings) => {
      const next = { ...(latest.current ?? {}), ...change };
      latest.current = next;
      const List = listSettingsJson(doctype, next);
      void mutate({ message: JSON.stringify({ List }) }, { revalidate: false });
      // A preference that was not stored is not worth interrupting the user for.
      call({ doctype, user_settings: JSON.stringify({ List }) }).catch(() => undefined);
    },
    [call, doctype, mutate],
  );
  return { loaded, settings, save };
}
