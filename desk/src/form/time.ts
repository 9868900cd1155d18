import { text } from '../text';

/** Frappe's datetimes are the platform's UTC without an offset: `2026-03-01 10:20:30.123456`. */
export function parseDatetime(value: string): Date {
  return new Date(`${value.replace(' ', 'T').slice(0, 23)}Z`);
}

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

// In the page's language (the desk's text is English for now), not the browser's.
const relative = new Intl.RelativeTimeFormat(document.documentElement.lang || 'en', { numeric: 'auto' });

/** "3 minutes ago" for a server datetime; under a minute (or a clock slightly ahead) is "just now". */
export function relativeTime(value: string, now: Date = new Date()): string {
  const seconds = (parseDatetime(value).getTime() - now.getTime()) / 1000;
  if (!Number.isFinite(seconds)) return value;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return text.timeline.justNow;
}
