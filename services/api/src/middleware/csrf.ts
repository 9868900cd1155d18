import { CSRFTokenError } from '@quire/errors';
import type { NextFunction, Request, Response } from 'express';

const UNSAFE = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/**
 * CSRF (frappe/auth.py::HTTPRequest.validate_csrf_token): a cookie session that was given a token
 * must send it (`X-Frappe-CSRF-Token`, or a `csrf_token` field) on unsafe verbs. Token and Basic
 * authentication carry no cookie session, so this never applies to them.
 */
export function csrf(req: Request, res: Response, next: NextFunction): void {
  const session = res.locals.session;
  if (!session?.csrfToken || !UNSAFE.has(req.method)) {
    next();
    return;
  }
  const body = req.body as Record<string, unknown> | undefined;
  const sent = req.headers['x-frappe-csrf-token'] ?? (body && typeof body === 'object' ? body.csrf_token : undefined);
  if (sent === session.csrfToken) {
    next();
    return;
  }
  next(new CSRFTokenError('Invalid Request', { title: 'Invalid Request' }));
}
