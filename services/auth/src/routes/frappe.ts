import { Router, type Response } from 'express';
import type { AuthContext } from '../context';
import { asyncRoute, formBody, formSecretToBasic } from '../http/request';
import { introspectAccessToken, revokeAccessToken, userinfo } from './access-tokens';
import { forwardToProvider } from './issuer';
import { applyTokenPolicy } from './token';

/**
 * Frappe's oauth2 endpoints (frappe/integrations/oauth2.py), at /api/method and /api/v1/method,
 * answering with Frappe's top-level JSON (no `message` wrapper) through the same flows as
 * /oauth/*. Frappe's clients post the client secret as a form field.
 */
const METHODS = ['authorize', 'get_token', 'revoke_token', 'introspect_token', 'openid_profile', 'openid_configuration'] as const;
const PREFIXES = ['/api/method/frappe.integrations.oauth2.', '/api/v1/method/frappe.integrations.oauth2.'];

export const FRAPPE_OAUTH_PATHS = PREFIXES.flatMap((prefix) => METHODS.map((m) => `${prefix}${m}`));
const at = (method: (typeof METHODS)[number]) => PREFIXES.map((prefix) => `${prefix}${method}`);

/** Frappe answers revoke_token with `{}` whatever the token was; oidc-provider's revocation answers an empty 200. */
function answerEmptyObject(res: Response): void {
  const end = res.end.bind(res);
  res.end = ((...args: Parameters<Response['end']>) => {
    if (res.statusCode !== 200 || res.headersSent) return end(...args);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', '2');
    return end('{}');
  }) as Response['end'];
}

export function frappeRouter(ctx: AuthContext): Router {
  const router = Router();

  router.get(at('authorize'), (req, res) => {
    const query = new URLSearchParams(req.query as Record<string, string>).toString();
    res.redirect(302, `/oauth/auth${query ? `?${query}` : ''}`);
  });
  router.get(at('openid_configuration'), (req, res) => forwardToProvider(req, res, '/.well-known/openid-configuration'));
  router.post(
    at('get_token'),
    formBody,
    asyncRoute(async (req, res) => {
      formSecretToBasic(req);
      if (!(await applyTokenPolicy(ctx, req, res))) forwardToProvider(req, res, '/oauth/token');
    }),
  );
  router.post(
    at('revoke_token'),
    formBody,
    asyncRoute(async (req, res) => {
      if (await revokeAccessToken(ctx, req, res, '{}')) return;
      formSecretToBasic(req);
      answerEmptyObject(res);
      forwardToProvider(req, res, '/oauth/token/revocation');
    }),
  );
  router.all(
    at('introspect_token'),
    formBody,
    asyncRoute(async (req, res) => {
      if (await introspectAccessToken(ctx, req, res)) return;
      formSecretToBasic(req);
      forwardToProvider(req, res, '/oauth/token/introspection');
    }),
  );
  router.all(
    at('openid_profile'),
    asyncRoute(async (req, res) => {
      await userinfo(ctx, req, res);
    }),
  );
  return router;
}
