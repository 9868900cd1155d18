import { TooManyRequestsError } from '@quire/errors';
import type { SiteRateLimiter } from '@quire/limits';
import type { Platform } from '@quire/tenancy';
import type { NextFunction, Request, Response } from 'express';
import { whenAnswered } from '../http/answered';

/**
 * Frappe's site rate limit (frappe/rate_limiter.py), for tenants whose config or plan sets `rate_limit`:
 * refused at once (429 TooManyRequestsError, Retry-After) while the window's request time is used
 * up, before the request queues for its turn or touches anything; otherwise its time is counted
 * when it is done. Every answer carries Frappe's X-RateLimit-Limit and -Remaining (microseconds),
 * -Reset (seconds) and, when not refused, -Used (this request's microseconds when its headers left).
 * A tenant without a limit costs one property read.
 */
export function limitSiteRate(limiter: SiteRateLimiter, platform: Pick<Platform, 'limitsOf'>) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const { tenant } = res.locals;
    // Its own `rate_limit`, else its plan's.
    const setting = platform.limitsOf(tenant).rateLimit;
    if (!setting) {
      next();
      return;
    }
    const check = limiter.check(tenant.name, setting);
    const headers: Record<string, string> = {
      'X-RateLimit-Limit': String(check.limitMicros),
      'X-RateLimit-Remaining': String(check.remainingMicros),
      'X-RateLimit-Reset': String(check.resetSeconds),
    };
    if (!check.allowed) {
      const message = `This site has used its request time for now: try again in ${check.resetSeconds} s`;
      const refusal = new TooManyRequestsError(message, { title: 'Too Many Requests', headers: { ...headers, 'Retry-After': String(check.resetSeconds) } });
      refuseSoon(next, refusal);
      return;
    }
    const started = performance.now();
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    // Every answer's headers go out through writeHead (res.end calls it when nobody did).
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
    res.writeHead = ((...args: unknown[]) => {
      if (!res.headersSent) res.setHeader('X-RateLimit-Used', String(Math.round((performance.now() - started) * 1000)));
      return writeHead(...args);
    }) as Response['writeHead'];
    const done = limiter.begin(tenant.name, setting);
    whenAnswered(res, () => done((performance.now() - started) * 1000));
    next();
  };
}

/**
 * How long a refusal is held before it is sent. A client that ignores Retry-After and asks again at
 * once, on many connections, would otherwise have the process do nothing but refuse it (measured:
 * 14,000 refusals a second took the event loop from the other tenants); held this long, each of its
 * connections is refused at most 40 times a second, and the answer still comes within 50 ms.
 */
export const REFUSAL_HOLD_MS = 25;

/** Sends a 429 after REFUSAL_HOLD_MS (its connection idle meanwhile: a timer, no work). */
export function refuseSoon(next: NextFunction, refusal: Error): void {
  setTimeout(() => next(refusal), REFUSAL_HOLD_MS).unref();
}
