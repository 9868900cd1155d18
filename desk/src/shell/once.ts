/**
 * Values handed from one screen to the next exactly once, in memory only: a secret the server
 * showed in the answer to a create (an OAuth client's) is carried across the move to the new
 * document's URL without being written to the browser's history or storage, and is gone once read.
 */
const handed = new Map<string, string>();

export function handOver(key: string, value: string): void {
  handed.set(key, value);
}

/** The value handed over under `key`, removed as it is read; undefined when there is none. */
export function takeOver(key: string): string | undefined {
  const value = handed.get(key);
  handed.delete(key);
  return value;
}
