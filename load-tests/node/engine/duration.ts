// k6 durations: Go's time.ParseDuration syntax (`500ms`, `30s`, `1m30s`, `1.5h`), or a bare number
// of milliseconds where k6 accepts one (request timeouts).

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a duration string; throws on anything k6 would refuse. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < s.length) {
    re.lastIndex = at;
    const m = re.exec(s);
    if (!m?.[1] || !m[2]) throw new Error(`invalid duration ${JSON.stringify(text)}`);
    total += Number(m[1]) * (UNITS[m[2]] ?? NaN);
    at = re.lastIndex;
  }
  if (s.length === 0 || !Number.isFinite(total)) throw new Error(`invalid duration ${JSON.stringify(text)}`);
  return total;
}

/** A duration option that may be a number of milliseconds or a string. */
export function durationMs(value: string | number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  return typeof value === 'number' ? value : parseDuration(value);
}

/** `00m05.0s`, as k6's progress lines show elapsed time. */
export function clock(ms: number): string {
  const m = Math.floor(ms / 60_000);
  const s = (ms - m * 60_000) / 1000;
  return `${String(m).padStart(2, '0')}m${s.toFixed(1).padStart(4, '0')}s`;
}
