import type { NextFunction, Request, Response } from 'express';

/**
 * CORS per tenant (frappe/app.py::set_cors_headers with site_config `allow_cors`): an allowed
 * Origin is echoed with credentials allowed; a preflight also gets the requested method and
 * headers. OPTIONS is always answered here with an empty 200, as Frappe does.
 */
export function cors(req: Request, res: Response, next: NextFunction): void {
  const origin = req.headers.origin;
  const tenant = res.locals.tenant;
  if (origin && allowed(tenant, origin)) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.appendHeader('Vary', 'Origin');
    if (req.method === 'OPTIONS') {
      const method = req.headers['access-control-request-method'];
      const headers = req.headers['access-control-request-headers'];
      if (method) res.setHeader('Access-Control-Allow-Methods', method);
      if (headers) res.setHeader('Access-Control-Allow-Headers', headers);
      res.setHeader('Access-Control-Max-Age', '86400');
    }
  }
  if (req.method === 'OPTIONS') {
    res.statusCode = 200;
    res.end();
    return;
  }
  next();
}

function allowed(tenant: Response['locals']['tenant'], origin: string): boolean {
  const rule = tenant.config.allow_cors;
  if (!rule) return false;
  const list = Array.isArray(rule) ? rule : [rule];
  return list.includes('*') || list.includes(origin);
}
