import { AuthenticationError } from '@quire/errors';
import { GUEST_PRINCIPAL, type Principal } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Passport } from 'passport';
import { BasicStrategy, TokenStrategy } from '../strategies/api-key';

/**
 * The caller (frappe/auth.py::validate_auth): an Authorization header of exactly two parts must
 * authenticate (else 401), through the passport strategy for its scheme; no header means Guest.
 */
export function authenticate(platform: Platform): RequestHandler {
  const passport = new Passport();
  passport.use(new TokenStrategy(platform));
  passport.use(new BasicStrategy(platform));
  const byScheme = new Map<string, RequestHandler>(
    ['token', 'basic'].map((scheme) => [scheme, passport.authenticate(scheme, { session: false, assignProperty: 'principal' }) as RequestHandler]),
  );
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.authorization;
    const parts = header ? header.split(' ') : [];
    if (parts.length !== 2) {
      res.locals.principal = GUEST_PRINCIPAL;
      next();
      return;
    }
    const strategy = byScheme.get(parts[0]!.toLowerCase());
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
  };
}
