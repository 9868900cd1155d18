// The requests since the last progress line: how a capacity run's steps read while it runs
// (k6 leaves that to its outputs; the Node runner has none).

let durations: number[] = [];
let failed = 0;
let enabled = false;

/** Only a run that prints progress lines keeps the window (nothing else empties it). */
export function keepWindow(on: boolean): void {
  enabled = on;
  durations = [];
  failed = 0;
}

export function addRequest(durationMs: number, isFailed: boolean): void {
  if (!enabled) return;
  durations.push(durationMs);
  if (isFailed) failed++;
}

/** `812 req/s, p95 12.3ms, 0.00% failed` over the last `ms`, then starts a new window. */
export function takeWindow(ms: number): string {
  const sorted = durations.sort((a, b) => a - b);
  const n = sorted.length;
  const p = (q: number): number => sorted[Math.min(n - 1, Math.floor(q * n))] ?? 0;
  const line = n
    ? `last ${(ms / 1000).toFixed(0)}s: ${Math.round(n / (ms / 1000))} req/s, p95 ${p(0.95).toFixed(1)}ms, p99 ${p(0.99).toFixed(1)}ms, ${((100 * failed) / n).toFixed(2)}% failed`
    : `last ${(ms / 1000).toFixed(0)}s: no requests`;
  durations = [];
  failed = 0;
  return line;
}
