import { DoesNotExistError, InReadOnlyMode, SessionStopped } from '@quire/errors';
import type { Platform } from '@quire/tenancy';
import type { NextFunction, Request, Response } from 'express';

/**
 * The request's tenant: `X-Frappe-Site-Name`, else the Host header (frappe/app.py::init_request),
 * resolved from the in-memory directory. An unknown site is a 404; a suspended one a 503; a
 * read-only one answers reads and refuses anything else with 503 InReadOnlyMode before it starts
 * (signing in and out excepted), so nothing is half-written.
 */

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Signing in and out change no document of the tenant: they work on a read-only site. */
const SESSION_PATHS = new Set(['/api/method/login', '/api/method/logout', '/api/v1/method/login', '/api/v1/method/logout']);
export function resolveTenant(platform: Platform) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const site = req.headers['x-frappe-site-name'];
    const tenant = platform.tenants.resolve(typeof site === 'string' && site !== '' ? site : req.headers.host);
    if (!tenant) {
      next(new DoesNotExistError(`Site ${String(site || req.headers.host || '')} not found`, { title: 'Not Found' }));
      return;
    }
    if (tenant.status === 'suspended') {
      next(new SessionStopped('This site is suspended', { title: 'Site Suspended' }));
      return;
    }
    if (tenant.status === 'read_only' && !READS.has(req.method) && !SESSION_PATHS.has(req.path)) {
      next(new InReadOnlyMode('This site is read-only for now: it can be read, not changed', { title: 'Read Only' }));
      return;
    }
    res.locals.tenant = tenant;
    next();
  };
}
