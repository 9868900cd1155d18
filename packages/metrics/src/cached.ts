/**
 * A value that costs a query, read at most once per `ttlMs` however many scrapes ask (every replica
 * is scraped, and each would otherwise query on each scrape). A read that fails or takes longer
 * than `timeoutMs` keeps the last value, so a slow database never stalls a scrape.
 */
export function cachedReading(read: () => Promise<number>, ttlMs?: number, timeoutMs?: number): () => Promise<number>;
/** …of any type: `initial` until the first read lands. */
export function cachedReading<T>(read: () => Promise<T>, ttlMs: number, timeoutMs: number, initial: T): () => Promise<T>;
export function cachedReading<T>(read: () => Promise<T>, ttlMs = 15_000, timeoutMs = 2_000, initial: T = 0 as T): () => Promise<T> {
  let value = initial;
  let readAt = -Infinity;
  let pending: Promise<void> | undefined;
  return async () => {
    if (performance.now() - readAt >= ttlMs) {
      pending ??= read()
        .then((v) => {
          value = v;
          readAt = performance.now();
        })
        .catch(() => {})
        .finally(() => {
          pending = undefined;
        });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pending, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    }
    return value;
  };
}
