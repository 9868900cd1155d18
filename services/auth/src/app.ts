import { randomBytes, timingSafeEqual } from 'node:crypto';
import { authenticatePassword, createSession, deleteSession, hashSessionId, loadPrincipal, readSecretHash, verifyApiSecret } from '@quire/auth';
import { FrappeError } from '@quire/errors';
import { recordRevocation, tenantAudience } from '@quire/oauth';
import type { Platform, Tenant } from '@quire/tenancy';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import { findAccount } from './account';
import { clientMetadata, configuredScopes, readClient, type TenantStore } from './adapter';
import type { AuthConfig } from './config';
import { readAccessToken } from './jwt';
import type { AuthMetrics } from './metrics';
import { consentPage, errorPage, loginPage } from './pages';
import { buildProvider } from './provider';
import { describeScope, isOidcScope } from './scopes';

/**
 * The auth service's HTTP surface, on each tenant's own origin:
 * - `/.well-known/openid-configuration` and `/oauth/*`: oidc-provider, with our login and consent
 *   pages (`/oauth/interaction/:uid`) and the endpoints it cannot serve for JWT access tokens it
 *   does not store (revocation, introspection, userinfo) answered here;
 * - `/api/method/frappe.integrations.oauth2.*`: Frappe's paths, with Frappe's top-level shapes.
 * Requests for anything else go on (the API, when both run in one process).
 */

export interface AuthAppDeps {
  platform: Platform;
  config: AuthConfig;
  metrics: AuthMetrics;
  cookieKeys: string[];
  logger: Logger;
}

const CSRF_COOKIE = 'oauth_csrf';

/** Frappe's oauth2 methods, at /api/method and /api/v1/method alike. */
const FRAPPE_METHODS = ['authorize', 'get_token', 'revoke_token', 'introspect_token', 'openid_profile', 'openid_configuration'] as const;
const FRAPPE_PREFIXES = ['/api/method/frappe.integrations.oauth2.', '/api/v1/method/frappe.integrations.oauth2.'];
const FRAPPE_PATHS = FRAPPE_PREFIXES.flatMap((prefix) => FRAPPE_METHODS.map((m) => `${prefix}${m}`));
const frappe = (method: (typeof FRAPPE_METHODS)[number]) => FRAPPE_PREFIXES.map((prefix) => `${prefix}${method}`);
const SUNSET = 'The implicit and password grants are not offered (OAuth 2.0 Security Best Current Practice, RFC 9700): use the authorization code grant with PKCE';

/** Providers per tenant and origin, built on first use and dropped when the tenant's keys change. */
export class ProviderRegistry {
  private readonly providers = new Map<string, Promise<Provider>>();

  constructor(private readonly deps: AuthAppDeps) {}

  get(tenant: Tenant, origin: string): Promise<Provider> {
    const key = `${tenant.name}\0${origin}`;
    let p = this.providers.get(key);
    if (!p) {
      p = buildProvider({ ...this.deps, onError: (e) => this.deps.logger.warn({ err: e }, 'oauth provider problem') }, tenant, origin);
      p.catch(() => this.providers.delete(key));
      this.providers.set(key, p);
    }
    return p;
  }

  /** Drops a tenant's providers (or every tenant's): they are rebuilt with its current keys on next use. */
  forget(tenant: string | undefined): void {
    for (const key of this.providers.keys()) if (tenant === undefined || key.startsWith(`${tenant}\0`)) this.providers.delete(key);
  }

  tenants(): string[] {
    return [...new Set([...this.providers.keys()].map((k) => k.split('\0')[0]!))];
  }
}

interface OAuthLocals {
  tenant: Tenant;
  origin: string;
  provider: Provider;
}

function locals(res: Response): OAuthLocals {
  return res.locals as OAuthLocals;
}

function oauthError(res: Response, status: number, error: string, description: string): void {
  res.status(status).set('Cache-Control', 'no-store').json({ error, error_description: description });
}

function cookies(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = decodeURIComponent(part.slice(eq + 1).trim());
  }
  return out;
}

function csrfToken(req: Request, res: Response): string {
  const token = randomBytes(24).toString('hex');
  res.append('Set-Cookie', `${CSRF_COOKIE}=${token}; Path=/oauth/interaction; HttpOnly; SameSite=Lax${req.secure ? '; Secure' : ''}`);
  return token;
}

function csrfValid(req: Request): boolean {
  const sent = (req.body as Record<string, unknown> | undefined)?.csrf_token;
  const kept = cookies(req)[CSRF_COOKIE];
  if (typeof sent !== 'string' || !kept || sent.length !== kept.length) return false;
  return timingSafeEqual(Buffer.from(sent), Buffer.from(kept));
}

/** Client id and secret from Basic auth or the form (Frappe's clients post them as fields). */
function clientCredentials(req: Request): { id?: string; secret?: string } {
  const auth = req.headers.authorization ?? '';
  if (/^basic /i.test(auth)) {
    const decoded = Buffer.from(auth.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) };
  }
  const body = (req.body ?? {}) as Record<string, unknown>;
  return {
    ...(typeof body.client_id === 'string' ? { id: body.client_id } : {}),
    ...(typeof body.client_secret === 'string' ? { secret: body.client_secret } : {}),
  };
}

/** Frappe clients send client_secret as a form field; oidc-provider's clients authenticate with Basic. */
function formSecretToBasic(req: Request): void {
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (typeof body.client_id === 'string' && typeof body.client_secret === 'string' && !req.headers.authorization) {
    req.headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(body.client_id)}:${encodeURIComponent(body.client_secret)}`).toString('base64')}`;
    delete body.client_secret;
    delete body.client_id;
  }
}

export function createAuthRouter(deps: AuthAppDeps, registry: ProviderRegistry): Router {
  const { platform, config } = deps;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '64kb' });

  const store = (tenant: Tenant): TenantStore => ({ db: platform.db, schema: tenant.schema, meta: () => platform.metas.peek(tenant) });

  /** Is the client known and is its secret (if confidential) right? */
  async function authenticateClient(tenant: Tenant, req: Request): Promise<string | undefined> {
    const { id, secret } = clientCredentials(req);
    if (!id) return undefined;
    const meta = await clientMetadata(store(tenant), id);
    if (!meta) return undefined;
    if (meta.token_endpoint_auth_method === 'none') return id;
    const hash = await readSecretHash(platform.db, tenant.schema, 'OAuth Client', id, 'client_secret');
    return hash && secret && verifyApiSecret(secret, hash) ? id : undefined;
  }

  // --- tenant and origin, then the provider for them ---
  router.use(['/oauth', '/.well-known', ...FRAPPE_PATHS], async (req, res, next) => {
    // The issuer is the origin the tenant is reached at, so the tenant comes from Host alone
    // (not X-Frappe-Site-Name): a token's `iss` must name one of the tenant's own hosts.
    // req.protocol and req.host follow X-Forwarded-Proto/Host only when `trust proxy` is configured.
    const tenant = platform.tenants.resolve(req.host);
    if (!tenant || tenant.status !== 'active') {
      oauthError(res, 404, 'invalid_request', 'Unknown site');
      return;
    }
    const origin = `${req.protocol}://${req.host}`;
    try {
      res.locals.tenant = tenant;
      res.locals.origin = origin;
      res.locals.provider = await registry.get(tenant, origin);
      next();
    } catch (e) {
      next(e);
    }
  });

  // oidc-provider builds its URLs from the path it was mounted at (the root of the origin), and
  // from the scheme and host express decided on (X-Forwarded-* only from a trusted proxy).
  const handlers = new WeakMap<Provider, ReturnType<Provider['callback']>>();
  const toProvider = (req: Request, res: Response) => {
    const { provider } = locals(res);
    let handle = handlers.get(provider);
    if (!handle) handlers.set(provider, (handle = provider.callback()));
    req.baseUrl = '';
    req.headers['x-forwarded-proto'] = req.protocol;
    req.headers['x-forwarded-host'] = req.host;
    void handle(req, res);
  };

  // --- refused grants, with the reason ---
  router.all('/oauth/auth', (req, res, next) => {
    const responseType = String((req.query.response_type ?? (req.body as Record<string, unknown> | undefined)?.response_type) ?? '');
    if (responseType && responseType !== 'code') {
      deps.metrics.refused('unsupported_response_type');
      res.status(400).type('html').send(errorPage('unsupported_response_type', SUNSET));
      return;
    }
    next();
  });

  /** The token endpoint's own rules, before oidc-provider: refused grants, client-credentials default scope. True when it answered. */
  async function tokenPolicy(req: Request, res: Response): Promise<boolean> {
    const body = req.body as Record<string, unknown>;
    const grant = String(body.grant_type ?? '');
    if (grant === 'password' || grant === 'implicit') {
      deps.metrics.refused('unsupported_grant_type');
      oauthError(res, 400, 'unsupported_grant_type', SUNSET);
      return true;
    }
    if (grant === 'client_credentials' && !body.scope) {
      // Without a requested scope a client-credentials token gets the client's configured API scopes.
      const { id } = clientCredentials(req);
      const row = id ? await readClient(store(locals(res).tenant), id) : undefined;
      if (row) body.scope = configuredScopes(row).filter((s) => !isOidcScope(s)).join(' ');
    }
    return false;
  }

  router.post('/oauth/token', form, (req, res, next) => {
    void tokenPolicy(req, res)
      .then((refused) => {
        if (!refused) next();
      })
      .catch(next);
  });

  // --- endpoints for JWT access tokens (oidc-provider does not store them) ---
  async function revoke(req: Request, res: Response, next: NextFunction, frappeShape: boolean): Promise<void> {
    const { tenant } = locals(res);
    const token = String((req.body as Record<string, unknown>).token ?? '');
    if (token.split('.').length !== 3) {
      next();
      return;
    }
    const client = await authenticateClient(tenant, req);
    if (!client) {
      deps.metrics.refused('invalid_client');
      oauthError(res, 401, 'invalid_client', 'client authentication failed');
      return;
    }
    // RFC 7009 §2.2: an invalid, expired or already revoked token, or another client's, is answered 200 too.
    const claims = await readAccessToken(platform, tenant, token, req.hostname);
    if (claims && claims.clientId === client) {
      const ttl = Math.max(1, claims.expiresAt - Math.floor(Date.now() / 1000)) + 60;
      await platform.db.transaction(async (tx) => {
        await recordRevocation(tx, tenant.schema, 'token', claims.jti, ttl);
        await platform.changes.tokenRevoked(tx, tenant, 'token', claims.jti);
      });
    }
    res.status(200).set('Cache-Control', 'no-store');
    if (frappeShape) res.json({});
    else res.end();
  }

  async function introspect(req: Request, res: Response, next: NextFunction): Promise<void> {
    const { tenant } = locals(res);
    const token = String((req.body as Record<string, unknown>).token ?? '');
    if (token.split('.').length !== 3) {
      next();
      return;
    }
    const client = await authenticateClient(tenant, req);
    if (!client) {
      deps.metrics.refused('invalid_client');
      oauthError(res, 401, 'invalid_client', 'client authentication failed');
      return;
    }
    const claims = await readAccessToken(platform, tenant, token, req.hostname);
    res.set('Cache-Control', 'no-store');
    if (!claims) {
      res.json({ active: false });
      return;
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
  }

  async function userinfo(req: Request, res: Response): Promise<void> {
    const { tenant } = locals(res);
    const auth = req.headers.authorization ?? '';
    const token = /^bearer /i.test(auth) ? auth.slice(7).trim() : '';
    const claims = token ? await readAccessToken(platform, tenant, token, req.hostname) : undefined;
    const scopes = claims?.scopes ?? new Set<string>();
    if (!claims || !scopes.has('openid')) {
      deps.metrics.refused('invalid_token');
      res.status(401).set('WWW-Authenticate', 'Bearer error="invalid_token"').json({ error: 'invalid_token', error_description: 'invalid or revoked access token, or no openid scope' });
      return;
    }
    const account = await findAccount(platform.db, platform.metas.peek(tenant), claims.user);
    if (!account) {
      res.status(401).json({ error: 'invalid_token', error_description: 'the user is gone or disabled' });
      return;
    }
    const all = (await account.claims('userinfo', [...scopes].join(' '), {}, [])) as Record<string, unknown>;
    const picked: Record<string, unknown> = { sub: all.sub };
    if (scopes.has('profile') || scopes.has('all')) for (const k of ['name', 'given_name', 'family_name', 'picture']) if (all[k] !== undefined) picked[k] = all[k];
    if (scopes.has('email') || scopes.has('all')) for (const k of ['email', 'email_verified']) if (all[k] !== undefined) picked[k] = all[k];
    res.set('Cache-Control', 'no-store').json(picked);
  }

  router.post('/oauth/token/revocation', form, (req, res, next) => void revoke(req, res, next, false).catch(next));
  router.post('/oauth/token/introspection', form, (req, res, next) => void introspect(req, res, next).catch(next));
  router.all('/oauth/me', form, (req, res, next) => void userinfo(req, res).catch(next));

  // --- signing out at the issuer (RP-initiated logout) also ends the site session it reused ---
  router.post('/oauth/session/end/confirm', form, (req, res, next) => {
    const { tenant } = locals(res);
    const sid = cookies(req).sid;
    if ((req.body as Record<string, unknown>).logout === 'yes' && sid && sid !== 'Guest') {
      res.once('finish', () => {
        if (res.statusCode < 300 || res.statusCode >= 400) return; // refused (its xsrf check failed)
        const sidHash = hashSessionId(sid);
        platform.db
          .transaction(async (tx) => {
            await deleteSession(tx, tenant, sidHash);
            await platform.changes.sessionChanged(tx, tenant, sidHash);
          })
          .catch((e: unknown) => deps.logger.warn({ err: e }, 'could not end the site session at sign-out'));
      });
    }
    next();
  });

  // --- login and consent ---
  router.get('/oauth/interaction/:uid', (req, res, next) => void interaction(req, res).catch(next));
  router.post('/oauth/interaction/:uid/login', form, (req, res, next) => void login(req, res).catch(next));
  router.post('/oauth/interaction/:uid/consent', form, (req, res, next) => void consent(req, res).catch(next));

  async function clientRow(tenant: Tenant, clientId: string): Promise<{ app_name: string; skip_authorization: number; roles: string[] } | undefined> {
    const meta = platform.metas.peek(tenant) ?? (await platform.metas.get(tenant));
    const clients = meta.require('OAuth Client');
    const { rows } = await platform.db.query<{ app_name: string; skip_authorization: number }>(
      `SELECT "app_name", "skip_authorization" FROM ${clients.table} WHERE "name" = $1`,
      [clientId],
    );
    if (!rows[0]) return undefined;
    const roles = await platform.db.query<{ role: string }>(
      `SELECT "role" FROM ${meta.require('OAuth Client Role').table} WHERE "parent" = $1 AND "parenttype" = 'OAuth Client'`,
      [clientId],
    );
    return { ...rows[0], roles: roles.rows.map((r) => r.role) };
  }

  /** Frappe's validate_client_id: the user needs one of the client's allowed roles (default Desk User). */
  async function rolesAllow(tenant: Tenant, user: string, allowed: string[]): Promise<boolean> {
    const principal = await loadPrincipal(platform.db, tenant.schema, user);
    if (!principal) return false;
    const needed = allowed.length ? allowed : ['Desk User'];
    return user === 'Administrator' || needed.some((r) => principal.roles.has(r));
  }

  async function finishConsent(req: Request, res: Response, accountId: string, details: Awaited<ReturnType<Provider['interactionDetails']>>): Promise<void> {
    const { provider } = locals(res);
    const { prompt, params } = details;
    const grant = details.grantId
      ? ((await provider.Grant.find(details.grantId)) ?? new provider.Grant({ accountId, clientId: String(params.client_id) }))
      : new provider.Grant({ accountId, clientId: String(params.client_id) });
    const missing = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  async function interaction(req: Request, res: Response): Promise<void> {
    const { provider, tenant } = locals(res);
    let details;
    try {
      details = await provider.interactionDetails(req, res);
    } catch {
      res.status(400).type('html').send(errorPage('invalid_request', 'This sign-in has expired or is not yours. Start again from the app.'));
      return;
    }
    const clientId = String(details.params.client_id);
    const client = await clientRow(tenant, clientId);
    if (!client) {
      res.status(400).type('html').send(errorPage('invalid_client', 'Unknown app'));
      return;
    }
    const action = `/oauth/interaction/${details.uid}`;
    if (details.prompt.name === 'login') {
      // A user already signed in to this site (a Quire session cookie) is not asked again.
      const sid = cookies(req).sid;
      const session = sid && sid !== 'Guest' ? await platform.sessions.authenticate(tenant, sid) : undefined;
      if (session && (await rolesAllow(tenant, session.principal.user, client.roles))) {
        await provider.interactionFinished(req, res, { login: { accountId: session.principal.user } }, { mergeWithLastSubmission: false });
        return;
      }
      res.type('html').set('Cache-Control', 'no-store').send(loginPage({ action: `${action}/login`, csrf: csrfToken(req, res), appName: client.app_name, site: req.hostname }));
      return;
    }
    const accountId = String(details.session?.accountId ?? '');
    if (client.skip_authorization) {
      await finishConsent(req, res, accountId, details);
      return;
    }
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    const requested = [...(missing.missingOIDCScope ?? []), ...Object.values(missing.missingResourceScopes ?? {}).flat()];
    const meta = platform.metas.peek(tenant);
    const scopes = [...new Set(requested)].sort((a, b) => Number(isOidcScope(b)) - Number(isOidcScope(a))).map((scope) => ({ scope, description: describeScope(scope, meta) }));
    res.type('html').set('Cache-Control', 'no-store').send(consentPage({ action: `${action}/consent`, csrf: csrfToken(req, res), appName: client.app_name, user: accountId, scopes }));
  }

  async function login(req: Request, res: Response): Promise<void> {
    const { provider, tenant } = locals(res);
    const details = await provider.interactionDetails(req, res).catch(() => undefined);
    if (!details || details.prompt.name !== 'login') {
      res.status(400).type('html').send(errorPage('invalid_request', 'This sign-in has expired. Start again from the app.'));
      return;
    }
    if (!csrfValid(req)) {
      res.status(403).type('html').send(errorPage('invalid_request', 'The form was not sent by this page (CSRF check failed). Reload and try again.'));
      return;
    }
    const client = await clientRow(tenant, String(details.params.client_id));
    const body = req.body as Record<string, unknown>;
    const again = (error: string, status: number) =>
      res
        .status(status)
        .type('html')
        .set('Cache-Control', 'no-store')
        .send(loginPage({ action: req.originalUrl, csrf: csrfToken(req, res), appName: client?.app_name ?? 'This app', site: req.hostname, usr: String(body.usr ?? ''), error }));
    let user;
    try {
      user = await authenticatePassword(platform.db, tenant, { usr: body.usr, pwd: body.pwd, ip: req.ip ?? '127.0.0.1' });
    } catch (e) {
      deps.metrics.refused(e instanceof FrappeError && e.httpStatus === 429 ? 'login_throttled' : 'login_failed');
      again(e instanceof FrappeError ? e.message : 'Sign-in failed', e instanceof FrappeError ? e.httpStatus : 401);
      return;
    }
    if (!(await rolesAllow(tenant, user.user, client?.roles ?? []))) {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'Your roles do not allow this app' }, { mergeWithLastSubmission: false });
      return;
    }
    // The same session /api/method/login opens, so the user stays signed in to the site.
    const session = await createSession(platform.db, tenant, user.user, { ip: req.ip ?? '127.0.0.1', device: 'desktop', expirySeconds: platform.sessionExpirySeconds });
    res.append('Set-Cookie', `sid=${session.sid}; Max-Age=${session.expiresInSeconds}; Path=/; HttpOnly; SameSite=Lax${req.secure ? '; Secure' : ''}`);
    res.append('Set-Cookie', `user_id=${encodeURIComponent(user.user)}; Path=/; SameSite=Lax${req.secure ? '; Secure' : ''}`);
    await provider.interactionFinished(req, res, { login: { accountId: user.user } }, { mergeWithLastSubmission: false });
  }

  async function consent(req: Request, res: Response): Promise<void> {
    const { provider } = locals(res);
    const details = await provider.interactionDetails(req, res).catch(() => undefined);
    if (!details || details.prompt.name !== 'consent') {
      res.status(400).type('html').send(errorPage('invalid_request', 'This request has expired. Start again from the app.'));
      return;
    }
    if (!csrfValid(req)) {
      res.status(403).type('html').send(errorPage('invalid_request', 'The form was not sent by this page (CSRF check failed). Reload and try again.'));
      return;
    }
    if ((req.body as Record<string, unknown>).decision !== 'allow') {
      deps.metrics.refused('access_denied');
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user denied access' }, { mergeWithLastSubmission: true });
      return;
    }
    await finishConsent(req, res, String(details.session?.accountId ?? ''), details);
  }

  // --- Frappe's paths (frappe/integrations/oauth2.py), answering with Frappe's top-level shapes ---
  router.get(frappe('authorize'), (req, res) => {
    const query = new URLSearchParams(req.query as Record<string, string>).toString();
    res.redirect(302, `/oauth/auth${query ? `?${query}` : ''}`);
  });
  router.post(frappe('get_token'), form, (req, res, next) => {
    formSecretToBasic(req);
    void tokenPolicy(req, res)
      .then((refused) => {
        if (refused) return;
        req.url = '/oauth/token';
        toProvider(req, res);
      })
      .catch(next);
  });
  router.post(frappe('revoke_token'), form, (req, res, next) => {
    void revoke(req, res, () => {
      // a refresh token: oidc-provider revokes it (and its grant); Frappe answers {} either way
      formSecretToBasic(req);
      req.url = '/oauth/token/revocation';
      const end = res.end.bind(res);
      res.end = ((...args: Parameters<typeof res.end>) => {
        if (res.statusCode === 200 && !res.headersSent) {
          res.setHeader('Content-Type', 'application/json');
          res.setHeader('Content-Length', '2');
          return end('{}');
        }
        return end(...args);
      }) as typeof res.end;
      toProvider(req, res);
    }, true).catch(next);
  });
  router.all(frappe('introspect_token'), form, (req, res, next) => {
    formSecretToBasic(req);
    void introspect(req, res, () => {
      req.url = '/oauth/token/introspection';
      toProvider(req, res);
    }).catch(next);
  });
  router.all(frappe('openid_profile'), (req, res, next) => void userinfo(req, res).catch(next));
  router.get(frappe('openid_configuration'), (req, res) => {
    req.url = '/.well-known/openid-configuration';
    toProvider(req, res);
  });

  // --- everything else under /oauth and /.well-known is oidc-provider's ---
  router.use(['/oauth', '/.well-known'], (req, res) => {
    req.url = req.originalUrl;
    toProvider(req, res);
  });
  return router;
}
