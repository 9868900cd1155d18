import { addDays, addMonths } from '@quire/meta';
import { invalidParam, shown } from './errors';

/**
 * Frappe's named date ranges (frappe/utils/data.py::get_timespan_date_range), relative to a given
 * today; weeks start on Monday. Every range is [from, to] inclusive, as `YYYY-MM-DD`.
 */

export type DateRange = readonly [string, string];

const pad = (n: number) => String(n).padStart(2, '0');

function parts(date: string): [number, number, number] {
  return date.split('-').map(Number) as [number, number, number];
}

function week(date: string): DateRange {
  const [y, m, d] = parts(date);
  const weekday = (new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7; // Monday = 0
  const start = addDays(date, -weekday);
  return [start, addDays(start, 6)];
}

function month(date: string): DateRange {
  const [y, m] = parts(date);
  const start = `${String(y).padStart(4, '0')}-${pad(m)}-01`;
  return [start, addDays(addMonths(start, 1), -1)];
}

function quarter(date: string): DateRange {
  const [y, m] = parts(date);
  const first = Math.floor((m - 1) / 3) * 3 + 1;
  const start = `${String(y).padStart(4, '0')}-${pad(first)}-01`;
  return [start, addDays(addMonths(start, 3), -1)];
}

function year(date: string): DateRange {
  const y = String(parts(date)[0]).padStart(4, '0');
  return [`${y}-01-01`, `${y}-12-31`];
}

const TIMESPANS: Readonly<Record<string, (today: string) => DateRange>> = {
  'last 7 days': (t) => [addDays(t, -7), t],
  'last 14 days': (t) => [addDays(t, -14), t],
  'last 30 days': (t) => [addDays(t, -30), t],
  'last week': (t) => week(addDays(t, -7)),
  'last month': (t) => month(addMonths(t, -1)),
  'last quarter': (t) => quarter(addMonths(t, -3)),
  'last 6 months': (t) => [addMonths(t, -6), t],
  'last year': (t) => year(addMonths(t, -12)),
  yesterday: (t) => [addDays(t, -1), addDays(t, -1)],
  today: (t) => [t, t],
  tomorrow: (t) => [addDays(t, 1), addDays(t, 1)],
  'this week': (t) => week(t),
  'this month': (t) => month(t),
  'this quarter': (t) => quarter(t),
  'this year': (t) => year(t),
  'next 7 days': (t) => [t, addDays(t, 7)],
  'next 14 days': (t) => [t, addDays(t, 14)],
  'next 30 days': (t) => [t, addDays(t, 30)],
  'next week': (t) => week(addDays(t, 7)),
  'next month': (t) => month(addMonths(t, 1)),
  'next quarter': (t) => quarter(addMonths(t, 3)),
  'next 6 months': (t) => [t, addMonths(t, 6)],
  'next year': (t) => year(addMonths(t, 12)),
};

export const TIMESPAN_NAMES: readonly string[] = Object.keys(TIMESPANS);

const normalize = (value: unknown): string | undefined => (typeof value === 'string' ? value.trim().toLowerCase().replace(/\s+/g, ' ') : undefined);

/** The date range of a `timespan` value; unknown text → 417. */
export function timespanRange(value: unknown, today: string): DateRange {
  const span = normalize(value);
  const range = span === undefined ? undefined : TIMESPANS[span];
  if (!range) throw invalidParam(`Invalid timespan ${shown(value)}: use one of ${TIMESPAN_NAMES.join(', ')}`);
  return range(today);
}

const PERIODS: Readonly<Record<string, string>> = {
  '1 week': 'week',
  '1 month': 'month',
  '3 months': 'quarter',
  '6 months': '6 months',
  '1 year': 'year',
};

/** `previous` / `next` with `1 week`…`1 year` → the equivalent `last …` / `next …` timespan. */
export function periodTimespan(operator: 'previous' | 'next', value: unknown): string {
  const period = normalize(value);
  const unit = period === undefined ? undefined : PERIODS[period];
  if (!unit) throw invalidParam(`Invalid value ${shown(value)} for ${operator}: use one of ${Object.keys(PERIODS).join(', ')}`);
  return `${operator === 'previous' ? 'last' : 'next'} ${unit}`;
}
