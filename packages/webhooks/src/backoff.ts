/**
 * When to try a failed webhook delivery again: exponential backoff with multiplicative jitter, raised to
 * honour `Retry-After`, and giving up once the event would be older than `maxAgeMs`.
 */

export interface RetryPolicy {
  /** Delay after the first failed attempt, and the floor of every delay. */
  baseDelayMs: number;
  /** Ceiling of every delay (also of a `Retry-After`). */
  maxDelayMs: number;
  /** Give up when the next attempt would happen later than this after the event was created. */
  maxAgeMs: number;
  /** Relative spread 0..1: a delay d becomes d * (1 ± jitter). */
  jitter: number;
}

const SECOND = 1000;
const HOUR = 3600 * SECOND;

/** 5 s, 10 s, 20 s, … capped at 12 h, ±20 %, for up to 3 days: about 19 attempts. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  baseDelayMs: 5 * SECOND,
  maxDelayMs: 12 * HOUR,
  maxAgeMs: 72 * HOUR,
  jitter: 0.2,
});

/**
 * Milliseconds to wait before the next attempt, or `undefined` to give up.
 *
 * `attempt` counts the attempts made so far (>= 1). The delay is `base * 2^(attempt-1)` capped at
 * `maxDelayMs`, multiplied by `1 + jitter * (2 * random() - 1)`, then kept within [base, max]. A
 * `Retry-After` header raises it to at least that much (still capped at `maxDelayMs`). Gives up when
 * `elapsedMs + delay > maxAgeMs`.
 */
export function nextAttemptDelay(
  policy: RetryPolicy,
  attempt: number,
  elapsedMs: number,
  retryAfter?: string,
  random: () => number = Math.random,
): number | undefined {
  const base = Math.max(0, policy.baseDelayMs);
  const max = Math.max(base, policy.maxDelayMs);
  const jitter = Math.min(1, Math.max(0, policy.jitter));
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  const exponential = Math.min(max, base * 2 ** Math.min(n - 1, 1023));
  const r = Math.min(1, Math.max(0, random()));
  let delay = Math.min(max, Math.max(base, exponential * (1 + jitter * (2 * r - 1))));
  const hinted = parseRetryAfter(retryAfter);
  if (hinted !== undefined) delay = Math.max(delay, Math.min(max, hinted));
  delay = Math.round(delay);
  if (elapsedMs + delay > policy.maxAgeMs) return undefined;
  return delay;
}

const HTTP_DATE =
  /^(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT|(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{2}-(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2} GMT|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/**
 * A `Retry-After` value in milliseconds from `now`: delta-seconds (`120`) or an HTTP-date (IMF-fixdate,
 * RFC 850 or asctime; a date in the past gives 0). `undefined` when absent or malformed.
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * SECOND;
  if (!HTTP_DATE.test(text)) return undefined;
  // asctime has no zone; it is GMT by definition.
  const at = Date.parse(/GMT$/.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
