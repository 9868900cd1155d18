import type { Queryable } from '@quire/db';

/**
 * A cleanup statement (deleting rows whose window has ended) run in the background at most once per
 * `everyMs`, whenever the returned function is called. A failure is left for the next time: an ended
 * window is never read again, so a row left behind only takes room.
 */
export function occasionalCleanup(db: Queryable, sql: string, everyMs: number): () => void {
  let last = Date.now();
  return () => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    db.query(sql).catch(() => undefined);
  };
}
