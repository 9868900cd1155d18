import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, nextAttemptDelay, parseRetryAfter, type RetryPolicy } from '../src/backoff';

const S = 1000;
const H = 3600 * S;
const mid = (): number => 0.5; // no jitter
const NO_JITTER: RetryPolicy = { ...DEFAULT_RETRY_POLICY, jitter: 0 };

describe('DEFAULT_RETRY_POLICY', () => {
  it('is 5 s base, 12 h max, 3 days, 20 % jitter', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ baseDelayMs: 5 * S, maxDelayMs: 12 * H, maxAgeMs: 72 * H, jitter: 0.2 });
    expect(Object.isFrozen(DEFAULT_RETRY_POLICY)).toBe(true);
  });
});

describe('nextAttemptDelay', () => {
  it('doubles from the base delay up to the cap', () => {
    const delays = Array.from({ length: 18 }, (_, i) => nextAttemptDelay(DEFAULT_RETRY_POLICY, i + 1, 0, undefined, mid));
    expect(delays.map((d) => (d ?? 0) / S)).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240, 20480, 40960, 43200, 43200, 43200, 43200]);
  });

  it('spans about three days with the default policy, then gives up', () => {
    let elapsed = 0;
    let attempts = 1; // the first attempt was made at creation
    const schedule: number[] = [];
    for (;;) {
      const delay = nextAttemptDelay(DEFAULT_RETRY_POLICY, attempts, elapsed, undefined, mid);
      if (delay === undefined) break;
      schedule.push(delay);
      elapsed += delay;
      attempts++;
    }
    expect(attempts).toBe(19);
    expect(elapsed).toBeGreaterThan(70 * H);
    expect(elapsed).toBeLessThanOrEqual(72 * H);
    expect(schedule.slice(-4)).toEqual([12 * H, 12 * H, 12 * H, 12 * H]);
  });

  it('spans at most three days whatever the jitter draws', () => {
    for (const r of [0, 0.25, 0.999999]) {
      let elapsed = 0;
      let attempts = 1;
      for (let delay = nextAttemptDelay(DEFAULT_RETRY_POLICY, attempts, elapsed, undefined, () => r); delay !== undefined;) {
        elapsed += delay;
        attempts++;
        delay = nextAttemptDelay(DEFAULT_RETRY_POLICY, attempts, elapsed, undefined, () => r);
      }
      expect(elapsed).toBeLessThanOrEqual(72 * H);
      expect(elapsed).toBeGreaterThan(60 * H);
      expect(attempts).toBeGreaterThanOrEqual(17);
      expect(attempts).toBeLessThanOrEqual(22);
    }
  });

  it('applies multiplicative jitter within ±jitter', () => {
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 4, 0, undefined, () => 0)).toBe(32 * S); // 40 s * 0.8
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 4, 0, undefined, () => 1)).toBe(48 * S); // 40 s * 1.2
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 4, 0, undefined, () => 0.75)).toBe(44 * S);
    for (let i = 0; i < 200; i++) {
      const d = nextAttemptDelay(DEFAULT_RETRY_POLICY, 6, 0) as number;
      expect(d).toBeGreaterThanOrEqual(128 * S);
      expect(d).toBeLessThanOrEqual(192 * S);
    }
  });

  it('never goes below the base delay nor above the cap', () => {
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 1, 0, undefined, () => 0)).toBe(5 * S);
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 1, 0, undefined, () => 1)).toBe(6 * S);
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 30, 0, undefined, () => 1)).toBe(12 * H);
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 30, 0, undefined, () => 0)).toBe(9.6 * H);
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 5000, 0, undefined, mid)).toBe(12 * H);
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, Number.MAX_SAFE_INTEGER, 0, undefined, mid)).toBe(12 * H);
  });

  it('treats odd attempt numbers and random values sanely', () => {
    expect(nextAttemptDelay(NO_JITTER, 0, 0)).toBe(5 * S);
    expect(nextAttemptDelay(NO_JITTER, -3, 0)).toBe(5 * S);
    expect(nextAttemptDelay(NO_JITTER, Number.NaN, 0)).toBe(5 * S);
    expect(nextAttemptDelay(NO_JITTER, 2.7, 0)).toBe(10 * S);
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 2, 0, undefined, () => 7)).toBe(12 * S);
    expect(nextAttemptDelay(DEFAULT_RETRY_POLICY, 2, 0, undefined, () => -7)).toBe(8 * S);
  });

  it('honours Retry-After in seconds', () => {
    expect(nextAttemptDelay(NO_JITTER, 1, 0, '120')).toBe(120 * S);
    // A shorter Retry-After does not shorten the backoff.
    expect(nextAttemptDelay(NO_JITTER, 10, 0, '1')).toBe(2560 * S);
    // It is capped at maxDelayMs.
    expect(nextAttemptDelay(NO_JITTER, 1, 0, String(7 * 24 * 3600))).toBe(12 * H);
    // Garbage is ignored.
    expect(nextAttemptDelay(NO_JITTER, 1, 0, 'soon')).toBe(5 * S);
    expect(nextAttemptDelay(NO_JITTER, 1, 0, '')).toBe(5 * S);
  });

  it('honours Retry-After as an HTTP date', () => {
    const inTenMinutes = new Date(Date.now() + 10 * 60 * S).toUTCString();
    const delay = nextAttemptDelay(NO_JITTER, 1, 0, inTenMinutes) as number;
    expect(delay).toBeGreaterThan(9 * 60 * S);
    expect(delay).toBeLessThanOrEqual(10 * 60 * S);
    const past = new Date(Date.now() - H).toUTCString();
    expect(nextAttemptDelay(NO_JITTER, 3, 0, past)).toBe(20 * S);
  });

  it('gives up when the next attempt would be past maxAgeMs', () => {
    expect(nextAttemptDelay(NO_JITTER, 1, 72 * H - 5 * S)).toBe(5 * S);
    expect(nextAttemptDelay(NO_JITTER, 1, 72 * H - 5 * S + 1)).toBeUndefined();
    expect(nextAttemptDelay(NO_JITTER, 20, 61 * H)).toBeUndefined();
    expect(nextAttemptDelay(NO_JITTER, 20, 60 * H)).toBe(12 * H);
    expect(nextAttemptDelay(NO_JITTER, 1, 80 * H)).toBeUndefined();
    // A Retry-After that pushes past the deadline also gives up.
    expect(nextAttemptDelay(NO_JITTER, 1, 70 * H, String(3 * 3600))).toBeUndefined();
  });

  it('works with a custom policy', () => {
    const policy: RetryPolicy = { baseDelayMs: 100, maxDelayMs: 1000, maxAgeMs: 3000, jitter: 0 };
    const delays: number[] = [];
    let elapsed = 0;
    for (let attempt = 1; ; attempt++) {
      const d = nextAttemptDelay(policy, attempt, elapsed);
      if (d === undefined) break;
      delays.push(d);
      elapsed += d;
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000]);
  });

  it('returns whole milliseconds', () => {
    const d = nextAttemptDelay({ baseDelayMs: 333, maxDelayMs: 10_000, maxAgeMs: 1e9, jitter: 0.3 }, 3, 0, undefined, () => 0.123);
    expect(Number.isInteger(d)).toBe(true);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2024-01-01T00:00:00Z');

  it.each<[string | undefined, number | undefined]>([
    ['0', 0],
    ['120', 120 * S],
    ['  30 ', 30 * S],
    ['Mon, 01 Jan 2024 00:01:00 GMT', 60 * S],
    ['Tue, 02 Jan 2024 00:00:00 GMT', 24 * H],
    ['Monday, 01-Jan-24 00:02:00 GMT', 120 * S],
    ['Mon Jan  1 00:03:00 2024', 180 * S],
    ['Sun, 31 Dec 2023 23:00:00 GMT', 0],
    [undefined, undefined],
    ['', undefined],
    ['-1', undefined],
    ['1.5', undefined],
    ['+5', undefined],
    ['soon', undefined],
    ['2024-01-01T00:01:00Z', undefined],
    ['Mon, 01 Jan 2024 00:01:00 PST', undefined],
    ['Xyz, 01 Jan 2024 00:01:00 GMT', undefined],
  ])('%j → %s', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it('defaults now to the current time', () => {
    const value = new Date(Date.now() + 60 * S).toUTCString();
    const ms = parseRetryAfter(value) as number;
    expect(ms).toBeGreaterThan(58 * S);
    expect(ms).toBeLessThanOrEqual(60 * S);
  });
});
