import { authenticatePassword, createSession, loadPrincipal } from '@quire/auth';
import { FrappeError } from '@quire/errors';
import { recordLogin } from '@quire/documents';
import { cstr } from '@quire/frappe-compat';
import { requestCookies, setCookie } from '@quire/http';
import type { Tenant } from '@quire/tenancy';
import express, { Router, type Request, type Response } from 'express';
import type Provider from 'oidc-provider';
import { clientRoles, readClient, tenantStore, type TenantStore } from '../adapter';
import type { AuthContext } from '../context';
import { csrfValid, issueCsrfToken } from '../http/csrf';
import { formOf } from '../http/request';
import { authPageHeaders, consentPage, errorPage, loginPage } from '../pages';
import { describeScope, isOidcScope } from '../scopes';

/**
 * The login and consent pages oidc-provider sends the browser to (`/oauth/interaction/:uid`).
 * Login checks the password as /api/method/login does (hashing, throttling) and opens the same
 * site session; a user who already has one is not asked again. The client's `allowed_roles`
 * decide who may use it. Consent lists the scopes in plain words; `skip_authorization` skips it.
 */

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

interface MissingGrants {
  missingOIDCScope?: string[];
  missingOIDCClaims?: string[];
  missingResourceScopes?: Record<string, string[]>;
}

const EXPIRED = 'This sign-in has expired or is not yours. Start again from the app.';
const FORGED = 'The form was not sent by this page (CSRF check failed). Reload and try again.';

function page(req: Request, res: Response, status: number, html: string): void {
  res
    .status(status)
    .type('html')
    .set({ 'Cache-Control': 'no-store', ...authPageHeaders(req.secure) })
    .send(html);
}

/** Frappe's validate_client_id: the user needs one of the client's allowed roles. */
async function rolesAllow(store: TenantStore, clientId: string, user: string): Promise<boolean> {
  if (user === 'Administrator') return true;
  const [principal, allowed] = await Promise.all([loadPrincipal(store.db(), store.schema, user), clientRoles(store, clientId)]);
  return principal !== undefined && allowed.some((r) => principal.roles.has(r));
}

async function details(req: Request, res: Response, prompt?: 'login' | 'consent'): Promise<Details | undefined> {
  const found = await res.locals.provider.interactionDetails(req, res).catch(() => undefined);
  return found && (!prompt || found.prompt.name === prompt) ? found : undefined;
}

/** Records the consent to what the request asked for and sends the browser on. */
async function grantAndFinish(req: Request, res: Response, accountId: string, d: Details): Promise<void> {
  const { provider } = res.locals;
  const clientId = String(d.params.client_id);
  const grant = (d.grantId ? await provider.Grant.find(d.grantId) : undefined) ?? new provider.Grant({ accountId, clientId });
  const missing = d.prompt.details as MissingGrants;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

export function interactionRouter(ctx: AuthContext): Router {
  const { platform, metrics } = ctx;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '64kb' });
  const storeOf = (tenant: Tenant) => tenantStore(platform, tenant);

  async function show(req: Request, res: Response): Promise<void> {
    const d = await details(req, res);
    if (!d) {
      page(req, res, 400, errorPage('invalid_request', EXPIRED));
      return;
    }
    const { provider, tenant } = res.locals;
    const store = storeOf(tenant);
    const clientId = String(d.params.client_id);
    const client = await readClient(store, clientId);
    if (!client) {
      page(req, res, 400, errorPage('invalid_client', 'Unknown app'));
      return;
    }
    const appName = client.app_name ?? clientId;
    const action = `/oauth/interaction/${d.uid}`;

    if (d.prompt.name === 'login') {
      const sid = requestCookies(req).sid;
      const session = sid && sid !== 'Guest' ? await platform.sessions.authenticate(tenant, sid) : undefined;
      if (session && (await rolesAllow(store, clientId, session.principal.user))) {
        await provider.interactionFinished(req, res, { login: { accountId: session.principal.user } }, { mergeWithLastSubmission: false });
        return;
      }
      page(req, res, 200, loginPage({ action: `${action}/login`, csrf: issueCsrfToken(req, res), appName, site: req.hostname }));
      return;
    }

    const accountId = d.session?.accountId ?? '';
    if (client.skip_authorization) return grantAndFinish(req, res, accountId, d);
    const missing = d.prompt.details as MissingGrants;
    const asked = new Set([...(missing.missingOIDCScope ?? []), ...Object.values(missing.missingResourceScopes ?? {}).flat()]);
    const meta = await store.meta();
    // Identity first, then what the app may do with the user's records.
    const scopes = [...asked]
      .sort((a, b) => Number(isOidcScope(b)) - Number(isOidcScope(a)))
      .map((scope) => ({ scope, description: describeScope(scope, meta) }));
    page(req, res, 200, consentPage({ action: `${action}/consent`, csrf: issueCsrfToken(req, res), appName, user: accountId, scopes }));
  }

  /** A posted login or consent: its interaction, or undefined once an expired or forged post has been answered. */
  async function postedStep(req: Request, res: Response, prompt: 'login' | 'consent'): Promise<Details | undefined> {
    const d = await details(req, res, prompt);
    if (!d) {
      page(req, res, 400, errorPage('invalid_request', EXPIRED));
      return undefined;
    }
    if (!csrfValid(req)) {
      page(req, res, 403, errorPage('invalid_request', FORGED));
      return undefined;
    }
    return d;
  }

  async function login(req: Request, res: Response): Promise<void> {
    const d = await postedStep(req, res, 'login');
    if (!d) return;
    const { provider, tenant } = res.locals;
    const store = storeOf(tenant);
    const clientId = String(d.params.client_id);
    const body = formOf(req);
    let user;
    try {
      user = await authenticatePassword(store.db(), tenant, { usr: body.usr, pwd: body.pwd, ip: req.ip ?? '127.0.0.1' });
    } catch (e) {
      if (!(e instanceof FrappeError)) throw e;
      metrics.refused(e.httpStatus === 429 ? 'login_throttled' : 'login_failed');
      const appName = (await readClient(store, clientId))?.app_name ?? 'This app';
      page(
        req,
        res,
        e.httpStatus,
        loginPage({ action: req.originalUrl, csrf: issueCsrfToken(req, res), appName, site: req.hostname, usr: cstr(body.usr), error: e.message }),
      );
      return;
    }
    if (!(await rolesAllow(store, clientId, user.user))) {
      metrics.refused('access_denied');
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'Your roles do not allow this app' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    // The same session /api/method/login opens, so the user stays signed in to the site.
    await recordLogin(store.db(), { meta: await store.meta() }, user.user, req.ip ?? '127.0.0.1');
    const session = await createSession(store.db(), tenant, user.user, {
      ip: req.ip ?? '127.0.0.1',
      device: 'desktop',
      expirySeconds: platform.sessionExpirySeconds,
    });
    setCookie(req, res, 'sid', session.sid, { httpOnly: true, maxAge: session.expiresInSeconds });
    setCookie(req, res, 'user_id', user.user);
    await provider.interactionFinished(req, res, { login: { accountId: user.user } }, { mergeWithLastSubmission: false });
  }

  async function consent(req: Request, res: Response): Promise<void> {
    const d = await postedStep(req, res, 'consent');
    if (!d) return;
    if (formOf(req).decision !== 'allow') {
      metrics.refused('access_denied');
      await res.locals.provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The user denied access' },
        { mergeWithLastSubmission: true },
      );
      return;
    }
    await grantAndFinish(req, res, d.session?.accountId ?? '', d);
  }

  router.get('/oauth/interaction/:uid', (req, res, next) => void show(req, res).catch(next));
  router.post('/oauth/interaction/:uid/login', form, (req, res, next) => void login(req, res).catch(next));
  router.post('/oauth/interaction/:uid/consent', form, (req, res, next) => void consent(req, res).catch(next));
  return router;
}
