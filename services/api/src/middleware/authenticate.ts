import { SESSION_COOKIES, type ActiveSession } from '@quire/auth';
import { AuthenticationError } from '@quire/errors';
import { GUEST, GUEST_PRINCIPAL, type Principal } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { clearCookie, requestCookies } from '@quire/http';
import type { Logger } from 'pino';
import { BasicStrategy, TokenStrategy } from '../strategies/api-key';
import { BearerStrategy } from '../strategies/bearer';
import { runStrategy } from '../strategies/run-strategy';
import { SessionStrategy } from '../strategies/session';
import type { Strategy } from 'passport-strategy';

/**
 * The caller (frappe/auth.py::validate_auth): an Authorization header of exactly two parts must
 * authenticate (else 401), through the passport strategy for its scheme (`token`, `basic`, or
 * `bearer` for OAuth access tokens, case-insensitively; run by runStrategy); otherwise a `sid` cookie
 * (or parameter) resumes a login session; otherwise the caller is Guest. An explicit
 * Authorization header wins over a cookie.
 */
export function authenticate(platform: Platform, logger: Logger): RequestHandler {
  const byScheme = new Map<string, Strategy>([
    ['token', new TokenStrategy(platform)],
    ['basic', new BasicStrategy(platform)],
    ['bearer', new BearerStrategy(platform, logger)],
  ]);
  const session = new SessionStrategy(platform);

  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.authorization;
    const space = header === undefined ? -1 : header.indexOf(' ');
    // Exactly two parts: a scheme and credentials without another space.
    if (header !== undefined && space >= 0 && header.indexOf(' ', space + 1) === -1) {
      const strategy = byScheme.get(header.slice(0, space).toLowerCase());
      if (!strategy) {
        next(new AuthenticationError('', { silent: true }));
        return;
      }
      runStrategy<Principal>(strategy, req).then((outcome) => {
        if (outcome.kind === 'success') {
          res.locals.principal = outcome.user;
          next();
        } else next(outcome.kind === 'error' ? outcome.error : new AuthenticationError('', { silent: true }));
      }, next);
      return;
    }
    const sid = sessionId(req);
    if (!sid || sid === GUEST) {
      res.locals.principal = GUEST_PRINCIPAL;
      next();
      return;
    }
    (req as Request & { sid?: string }).sid = sid;
    runStrategy<ActiveSession>(session, req).then((outcome) => {
      if (outcome.kind === 'error') {
        next(outcome.error);
        return;
      }
      if (outcome.kind === 'success') {
        res.locals.session = outcome.user;
        res.locals.principal = outcome.user.principal;
      } else {
        // Frappe: an expired session continues as Guest, says so, and clears the session cookies.
        res.locals.principal = GUEST_PRINCIPAL;
        res.locals.bodyExtras = { ...(res.locals.bodyExtras ?? {}), session_expired: 1 };
        for (const name of SESSION_COOKIES) clearCookie(req, res, name);
      }
      next();
    }, next);
  };
}

/** The session id a request carries: the `sid` cookie, else a `sid` parameter (query or form). */
export function sessionId(req: Request): string | undefined {
  const fromCookie = requestCookies(req).sid;
  if (fromCookie) return fromCookie;
  const q = req.query.sid;
  if (typeof q === 'string' && q) return q;
  const body = req.body as Record<string, unknown> | undefined;
  const b = body && typeof body === 'object' && !Array.isArray(body) ? body.sid : undefined;
  return typeof b === 'string' && b ? b : undefined;
}
