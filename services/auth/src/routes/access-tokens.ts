import { cstr } from '@quire/frappe-compat';
import { recordRevocation, tenantAudience } from '@quire/oauth';
import type { Request, Response } from 'express';
import { findAccount } from '../account';
import { tenantStore } from '../adapter';
import { authenticateClient } from '../clients';
import type { AuthContext } from '../context';
import { clientCredentials, formOf, oauthError } from '../http/request';
import { readAccessToken } from '../jwt';

/**
 * Revocation, introspection and userinfo for our JWT access tokens, which oidc-provider neither
 * stores nor can revoke. Refresh tokens (opaque, stored) go on to oidc-provider: the revocation
 * and introspection handlers resolve false for them.
 */

const isJwt = (token: string) => token.split('.').length === 3;

async function authenticatedClient(ctx: AuthContext, req: Request, res: Response): Promise<string | undefined> {
  const client = await authenticateClient(tenantStore(ctx.platform, res.locals.tenant), clientCredentials(req));
  if (!client) {
    ctx.metrics.refused('invalid_client');
    oauthError(res, 401, 'invalid_client', 'client authentication failed');
  }
  return client;
}

/** RFC 7009 for an access token: a revocation row and NOTIFY, so every API process refuses it. */
export async function revokeAccessToken(ctx: AuthContext, req: Request, res: Response, body: '' | '{}'): Promise<boolean> {
  const token = cstr(formOf(req).token);
  if (!isJwt(token)) return false;
  const client = await authenticatedClient(ctx, req, res);
  if (!client) return true;
  const { tenant } = res.locals;
  // RFC 7009 §2.2: an invalid, expired or already revoked token, or another client's, is answered 200 too.
  const claims = await readAccessToken(ctx.platform, tenant, token, req.hostname);
  if (claims && claims.clientId === client) {
    const ttl = Math.max(1, claims.expiresAt - Math.floor(Date.now() / 1000)) + 60;
    const db = tenantStore(ctx.platform, tenant).db();
    await db.transaction(async (tx) => {
      await recordRevocation(tx, tenant.schema, 'token', claims.jti, ttl);
      await ctx.platform.changes.tokenRevoked(tx, tenant, 'token', claims.jti);
    });
  }
  res.status(200).set('Cache-Control', 'no-store');
  if (body) res.type('json').send(body);
  else res.end();
  return true;
}

/** RFC 7662 for an access token. */
export async function introspectAccessToken(ctx: AuthContext, req: Request, res: Response): Promise<boolean> {
  const token = cstr(formOf(req).token);
  if (!isJwt(token)) return false;
  if (!(await authenticatedClient(ctx, req, res))) return true;
  const { tenant } = res.locals;
  const claims = await readAccessToken(ctx.platform, tenant, token, req.hostname);
  res.set('Cache-Control', 'no-store');
  if (!claims) {
    res.json({ active: false });
    return true;
  }
  res.json({
    active: true,
    client_id: claims.clientId,
    sub: claims.user,
    scope: claims.scope,
    exp: claims.expiresAt,
    iss: claims.issuer,
    aud: tenantAudience(tenant.name),
    jti: claims.jti,
    token_type: 'Bearer',
  });
  return true;
}

const PROFILE_CLAIMS = ['name', 'given_name', 'family_name', 'picture'];
const EMAIL_CLAIMS = ['email', 'email_verified'];

/** OpenID Connect userinfo: the claims of the identity scopes the token was granted with. */
export async function userinfo(ctx: AuthContext, req: Request, res: Response): Promise<void> {
  const { tenant } = res.locals;
  const auth = req.headers.authorization ?? '';
  const token = /^bearer /i.test(auth) ? auth.slice(7).trim() : '';
  const claims = token ? await readAccessToken(ctx.platform, tenant, token, req.hostname) : undefined;
  const account = claims?.scopes.has('openid') ? await findAccount(tenantStore(ctx.platform, tenant).db(), tenant.schema, claims.user) : undefined;
  if (!claims || !account) {
    ctx.metrics.refused('invalid_token');
    res
      .status(401)
      .set('WWW-Authenticate', 'Bearer error="invalid_token"')
      .json({ error: 'invalid_token', error_description: 'invalid, expired or revoked access token, no openid scope, or the user is disabled' });
    return;
  }
  const all = (await account.claims('userinfo', claims.scope, {}, [])) as Record<string, unknown>;
  const picked: Record<string, unknown> = { sub: all.sub };
  const wanted = [...(claims.scopes.has('profile') ? PROFILE_CLAIMS : []), ...(claims.scopes.has('email') ? EMAIL_CLAIMS : [])];
  for (const k of wanted) if (all[k] !== undefined) picked[k] = all[k];
  res.set('Cache-Control', 'no-store').json(picked);
}
