import { SESSION_COOKIES, type ActiveSession } from '@quire/auth';
import { AuthenticationError } from '@quire/errors';
import { GUEST, GUEST_PRINCIPAL, type Principal } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Passport } from 'passport';
import { clearCookie, requestCookies } from '@quire/http';
import type { Logger } from 'pino';
import { BasicStrategy, TokenStrategy } from '../strategies/api-key';
import { BearerStrategy } from '../strategies/bearer';
import { SessionStrategy } from '../strategies/session';

/**
 * The caller (frappe/auth.py::validate_auth): an Authorization header of exactly two parts must
 * authenticate (else 401), through the passport strategy for its scheme (`token`, `basic`, or
 * `bearer` for OAuth access tokens, case-insensitively); otherwise a `sid` cookie
 * (or parameter) resumes a login session; otherwise the caller is Guest. An explicit
 * Authorization header wins over a cookie.
 */
export function authenticate(platform: Platform, logger: Logger): RequestHandler {
  const passport = new Passport();
  passport.use(new TokenStrategy(platform));
  passport.use(new BasicStrategy(platform));
  passport.use(new BearerStrategy(platform, logger));
  passport.use(new SessionStrategy(platform));
  const byScheme = new Map<string, RequestHandler>(
    ['token', 'basic', 'bearer'].map((scheme) => [scheme, passport.authenticate(scheme, { session: false, assignProperty: 'principal' }) as RequestHandler]),
  );
  const session = passport.authenticate('session', { session: false, assignProperty: 'quireSession' }) as RequestHandler;

  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.authorization;
    const parts = header ? header.split(' ') : [];
    const scheme = parts.length === 2 ? parts[0] : undefined;
    if (scheme !== undefined) {
      const strategy = byScheme.get(scheme.toLowerCase());
      if (!strategy) {
        next(new AuthenticationError('', { silent: true }));
        return;
      }
      strategy(req, res, (err?: unknown) => {
        if (err) {
          next(err);
          return;
        }
        res.locals.principal = (req as Request & { principal: Principal }).principal;
        next();
      });
      return;
    }
    const sid = sessionId(req);
    if (!sid || sid === GUEST) {
      res.locals.principal = GUEST_PRINCIPAL;
      next();
      return;
    }
    (req as Request & { sid?: string }).sid = sid;
    session(req, res, (err?: unknown) => {
      if (err) {
        next(err);
        return;
      }
      const active = (req as Request & { quireSession?: ActiveSession }).quireSession;
      if (active) {
        res.locals.session = active;
        res.locals.principal = active.principal;
      } else {
        // Frappe: an expired session continues as Guest, says so, and clears the session cookies.
        res.locals.principal = GUEST_PRINCIPAL;
        res.locals.bodyExtras = { ...(res.locals.bodyExtras ?? {}), session_expired: 1 };
        for (const name of SESSION_COOKIES) clearCookie(req, res, name);
      }
      next();
    });
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
