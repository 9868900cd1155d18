import { formatDatetime } from '@quire/meta';

/** A moment as the jobs tables' `timestamp` columns (UTC, no zone) take it. */
export function timestampOf(d: Date): string {
  return formatDatetime(d.getTime() * 1000);
}
