import { Router } from 'express';
import type { AuthContext } from './context';
import { asyncRoute, formBody } from './http/request';
import { introspectAccessToken, revokeAccessToken, userinfo } from './routes/access-tokens';
import { refuseImplicit } from './routes/authorization';
import { endSiteSessionOnSignOut } from './routes/end-session';
import { FRAPPE_OAUTH_PATHS, frappeRouter } from './routes/frappe';
import { interactionRouter } from './routes/interaction';
import { forwardToProvider, resolveIssuer } from './routes/issuer';
import { applyTokenPolicy } from './routes/token';
import type { ProviderRegistry } from './registry';

/**
 * The auth service's HTTP surface, on each tenant's own origin:
 * - `/.well-known/openid-configuration` and `/oauth/*`: oidc-provider, with our login and consent
 *   pages and the endpoints it cannot serve for the JWT access tokens it does not store
 *   (revocation, introspection, userinfo) answered by us;
 * - Frappe's `frappe.integrations.oauth2.*` methods, with Frappe's top-level shapes.
 * Requests for anything else go on (to the API, when both run in one process).
 */
export function createAuthRouter(ctx: AuthContext, registry: ProviderRegistry): Router {
  const router = Router();

  router.use(['/oauth', '/.well-known', ...FRAPPE_OAUTH_PATHS], resolveIssuer(ctx, registry));

  router.all('/oauth/auth', refuseImplicit(ctx));
  router.post(
    '/oauth/token',
    formBody,
    asyncRoute((req, res) => applyTokenPolicy(ctx, req, res)),
  );
  router.post(
    '/oauth/token/revocation',
    formBody,
    asyncRoute((req, res) => revokeAccessToken(ctx, req, res, '')),
  );
  router.post(
    '/oauth/token/introspection',
    formBody,
    asyncRoute((req, res) => introspectAccessToken(ctx, req, res)),
  );
  router.all(
    '/oauth/me',
    formBody,
    asyncRoute(async (req, res) => {
      await userinfo(ctx, req, res);
    }),
  );
  router.post('/oauth/session/end/confirm', formBody, endSiteSessionOnSignOut(ctx));
  router.use(interactionRouter(ctx));
  router.use(frappeRouter(ctx));

  // Everything else under /oauth and /.well-known is oidc-provider's.
  router.use(['/oauth', '/.well-known'], (req, res) => forwardToProvider(req, res));
  return router;
}
