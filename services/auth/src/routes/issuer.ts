import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type Provider from 'oidc-provider';
import type { AuthContext } from '../context';
import { oauthError } from '../http/request';
import type { ProviderRegistry } from '../registry';

/**
 * The tenant, the issuer's origin and its provider, for every auth path. The issuer is the
 * origin the tenant is reached at, so the tenant comes from the host alone (not
 * X-Frappe-Site-Name): a token's `iss` must name one of the tenant's own hosts. `req.protocol` and
 * `req.host` follow X-Forwarded-Proto/Host only when TRUST_PROXY trusts the peer.
 */
export function resolveIssuer({ platform }: AuthContext, registry: ProviderRegistry): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const tenant = platform.tenants.resolve(req.host);
    if (!tenant || tenant.status === 'suspended') {
      oauthError(res, 404, 'invalid_request', 'Unknown site');
      return;
    }
    // A read-only site still shows its discovery document and keys; signing in and tokens write.
    if (tenant.status === 'read_only' && req.method !== 'GET' && req.method !== 'HEAD') {
      oauthError(res, 503, 'temporarily_unavailable', 'This site is read-only for now');
      return;
    }
    const origin = `${req.protocol}://${req.host}`;
    registry.get(tenant, origin).then((provider) => {
      Object.assign(res.locals, { tenant, origin, provider });
      next();
    }, next);
  };
}

const callbacks = new WeakMap<Provider, ReturnType<Provider['callback']>>();

/**
 * Hands the request to oidc-provider. It builds its URLs from the path it is mounted at (the root
 * of the origin) and from the scheme and host express decided on: it trusts X-Forwarded-*, which
 * are set here to express's values.
 */
export function forwardToProvider(req: Request, res: Response, url: string = req.originalUrl): void {
  const { provider } = res.locals;
  let callback = callbacks.get(provider);
  if (!callback) callbacks.set(provider, (callback = provider.callback()));
  req.url = url;
  req.baseUrl = '';
  req.headers['x-forwarded-proto'] = req.protocol;
  req.headers['x-forwarded-host'] = req.host;
  void callback(req, res);
}
