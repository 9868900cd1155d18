import { parseDatetime } from './docinfo';
import { text } from '../text';

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "3 minutes ago" for a server datetime; under a minute (or a clock slightly ahead) is "just now". */
export function relativeTime(value: string, now: Date = new Date()): string {
  const seconds = (parseDatetime(value).getTime() - now.getTime()) / 1000;
  if (!Number.isFinite(seconds)) return value;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return text.timeline.justNow;
}

/** A `<time>` saying how long ago, with the exact moment as its machine value and its tooltip. */
export function RelativeTime({ value }: { value: string }) {
  const date = parseDatetime(value);
  const valid = Number.isFinite(date.getTime());
  return (
    <time className="timeline-time" dateTime={valid ? date.toISOString() : value} title={valid ? date.toLocaleString() : value}>
      {relativeTime(value)}
    </time>
  );
}
