import { createHash } from 'node:crypto';
import { RateLimitExceededError } from '@quire/errors';
import { clientBucket } from './client-address';
import type { RateCounter } from './rate-counter';

/**
 * A limit on calls to one method (Frappe's `@rate_limit(key, limit, seconds, ip_based)`): at most
 * `limit` calls per `seconds`, counted per client address, per value of the argument `key`, or per
 * both (`key` with `ipBased`, the default).
 */
export interface RateLimitRule {
  /** Calls allowed in one window. */
  limit: number;
  /** The window, in seconds, from the first call counted in it. */
  seconds: number;
  /** Counted per the value of this argument (compared trimmed and lower-cased, as names and emails are). */
  key?: string;
  /** Counted per client address as well (default true); `false` with `key`: per argument value, from anywhere. */
  ipBased?: boolean;
}

export interface RateLimitedCall {
  /** What the counts belong to: the tenant and the method (`<tenant>:<method path>`). */
  scope: string;
  /** The client's address (the proxy's X-Forwarded-For only when TRUST_PROXY trusts it). */
  ip: string;
  args: Readonly<Record<string, unknown>>;
}

const MESSAGE = 'You hit the rate limit because of too many requests. Please try after sometime.';

/** Who a rule counts a call against; hashed, so an argument of any length makes a short key. */
function identity(rule: RateLimitRule, index: number, call: RateLimitedCall): string {
  const parts: string[] = [];
  if (rule.ipBased !== false || rule.key === undefined) parts.push(`ip:${clientBucket(call.ip)}`);
  if (rule.key !== undefined) {
    const value = call.args[rule.key];
    parts.push(`${rule.key}:${typeof value === 'string' ? value.trim().toLowerCase() : JSON.stringify(value ?? null)}`);
  }
  const digest = createHash('sha256').update(parts.join('\0')).digest('base64url');
  return `rl:${call.scope}:${index}:${digest}`;
}

/**
 * Counts the call against each rule in order and refuses it (429, `RateLimitExceededError`, with
 * `Retry-After`) at the first rule it exceeds; later rules are not counted then, so a client held
 * back by its address cannot fill the per-argument counts (nor the table) with made-up values.
 */
export async function enforceRateLimits(counter: RateCounter, rules: readonly RateLimitRule[], call: RateLimitedCall): Promise<void> {
  for (const [index, rule] of rules.entries()) {
    const { count, resetSeconds } = await counter.hit(identity(rule, index, call), rule.seconds);
    if (count > rule.limit) {
      throw new RateLimitExceededError(MESSAGE, { title: 'Rate Limit Exceeded', headers: { 'Retry-After': String(resetSeconds) } });
    }
  }
}
