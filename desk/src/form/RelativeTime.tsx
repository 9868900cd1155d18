import { parseDatetime, relativeTime } from './time';

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
