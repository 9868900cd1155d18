import type { SiteRateLimiter } from '@quire/limits';
import type { Platform } from '@quire/tenancy';
import type { NextFunction, Request, Response } from 'express';
import { whenAnswered } from '../http/answered';
import { refuseSoon } from '../http/refusal';

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
      refuseSoon(res, message, { ...headers, 'Retry-After': String(check.resetSeconds) });
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
