import { DoesNotExistError, InReadOnlyMode, SessionStopped } from '@quire/errors';
import type { Platform, Tenant } from '@quire/tenancy';
import type { NextFunction, Request, Response } from 'express';

/**
 * The request's tenant: `X-Frappe-Site-Name`, else the Host header (frappe/app.py::init_request),
 * resolved from the in-memory directory. An unknown site is a 404; a suspended one a 503; a
 * read-only one answers reads and refuses anything else with 503 InReadOnlyMode before it starts
 * (signing in and out excepted), so nothing is half-written. While a move switches the tenant to
 * another cluster, its writes wait (holding no turn and no connection) until the directory names the
 * new cluster, then go there; reads go on throughout.
 */

/** How long a write waits for a move's switch (which takes about a second) before a 503 asks to try again. */
const MOVE_HOLD_MS = 10_000;

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
    if (tenant.movingTo !== null && !READS.has(req.method)) {
      void holdWhileMoving(platform, tenant).then((now) => {
        if (!now) next(new DoesNotExistError(`Site ${tenant.name} not found`, { title: 'Not Found' }));
        else if (now.movingTo !== null) next(new SessionStopped('This site is moving to another database: try again in a moment', MOVING));
        else admit(now, req, res, next);
      });
      return;
    }
    admit(tenant, req, res, next);
  };
}

const MOVING = { title: 'Site Moving', headers: { 'Retry-After': '2' } } as const;

/** The tenant once its move's switch is over (or MOVE_HOLD_MS passed); undefined if it went. */
async function holdWhileMoving(platform: Platform, tenant: Tenant): Promise<Tenant | undefined> {
  const until = Date.now() + MOVE_HOLD_MS;
  let now: Tenant | undefined = tenant;
  while (now !== undefined && now.movingTo !== null && Date.now() < until) {
    await platform.tenants.changed(tenant.name, until - Date.now());
    now = platform.tenants.get(tenant.name);
  }
  return now;
}

/** The tenant's status decides: served, refused (suspended), or reads only. */
function admit(tenant: Tenant, req: Request, res: Response, next: NextFunction): void {
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
}
