import { DoesNotExistError, SessionStopped } from '@quire/errors';
import type { Platform } from '@quire/tenancy';
import type { NextFunction, Request, Response } from 'express';

/**
 * The request's tenant: `X-Frappe-Site-Name`, else the Host header (frappe/app.py::init_request),
 * resolved from the in-memory directory. An unknown site is a 404; a suspended one a 503.
 */
export function resolveTenant(platform: Platform) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const site = req.headers['x-frappe-site-name'];
    const tenant = platform.tenants.resolve(typeof site === 'string' && site !== '' ? site : req.headers.host);
    if (!tenant) {
      next(new DoesNotExistError(`Site ${String(site || req.headers.host || '')} not found`, { title: 'Not Found' }));
      return;
    }
    if (tenant.status !== 'active') {
      next(new SessionStopped('This site is suspended', { title: 'Site Suspended' }));
      return;
    }
    res.locals.tenant = tenant;
    next();
  };
}
