import { verifyApiSecret } from '@quire/auth';
import { cstr } from '@quire/frappe-compat';
import { privateKeys, recordRevocation, tenantAudience } from '@quire/oauth';
import type { Tenant, Platform } from '@quire/tenancy';
import Provider, { errors, type Configuration, type Grant, type KoaContextWithOIDC } from 'oidc-provider';
import { findAccount } from './account';
import { adapterFor, tenantStore } from './adapter';
import type { AuthConfig } from './config';
import type { AuthMetrics } from './metrics';
import { isOidcScope, OIDC_SCOPES } from './scopes';
import { authPageHeaders, errorPage, logoutPage, signedOutPage } from './pages';

/** Our extra client metadata (see adapter.ts). */
interface QuireClient {
  /** The user a client-credentials client acts as. */
  quire_user?: string;
  /** The API scopes the client may be granted, space-separated. */
  quire_scopes?: string;
}

/** The identity scopes (openid, profile, …) of the grant the token at hand was issued from. */
function grantedIdentityScopes(ctx: KoaContextWithOIDC): string[] {
  const entities = ctx.oidc.entities as { AuthorizationCode?: { scope?: string }; RefreshToken?: { scope?: string }; Grant?: Grant };
  const asked = entities.AuthorizationCode?.scope ?? entities.RefreshToken?.scope;
  if (!asked || !entities.Grant) return [];
  return entities.Grant.getOIDCScopeFiltered(new Set(asked.split(' ')))
    .split(' ')
    .filter((s) => s && isOidcScope(s));
}

export interface ProviderDeps {
  platform: Platform;
  config: AuthConfig;
  cookieKeys: string[];
  metrics: AuthMetrics;
  onError: (e: unknown) => void;
}

/**
 * One oidc-provider instance per tenant and origin: the issuer is the origin the tenant was
 * reached at (its subdomain or a custom domain). Signing keys are the tenant's ES256 keys; storage
 * is the tenant's schema; clients are its OAuth Client documents. Access tokens are RFC 9068 JWTs
 * for the tenant's API, carrying the grant id (`gid`) so a revoked grant stops them everywhere.
 */
export async function buildProvider(deps: ProviderDeps, tenant: Tenant, origin: string): Promise<Provider> {
  const { platform, config } = deps;
  const store = tenantStore(platform, tenant);
  const keys = await privateKeys(store.db(), tenant.schema, platform.secrets);
  const audience = tenantAudience(tenant.name);

  const configuration: Configuration = {
    adapter: adapterFor(store),
    jwks: { keys },
    findAccount: (_ctx, id) => findAccount(store.db(), tenant.schema, id),
    clientBasedCORS: () => true,
    conformIdTokenClaims: true,
    scopes: [...OIDC_SCOPES],
    claims: { openid: ['sub'], profile: ['name', 'given_name', 'family_name', 'picture'], email: ['email', 'email_verified'] },
    extraClientMetadata: { properties: ['quire_user', 'quire_scopes'] },
    responseTypes: ['code'],
    pkce: { required: (_ctx, client) => client.tokenEndpointAuthMethod === 'none' },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) => {
          ctx.type = 'html';
          ctx.set(authPageHeaders(ctx.secure));
          ctx.body = logoutPage(ctx.hostname, form);
        },
        postLogoutSuccessSource: (ctx) => {
          ctx.type = 'html';
          ctx.set(authPageHeaders(ctx.secure));
          ctx.body = signedOutPage(ctx.hostname);
        },
      },
      userinfo: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator, client) => {
          if (indicator !== audience) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
          const granted = (client as unknown as QuireClient).quire_scopes ?? '';
          return { scope: granted, audience, accessTokenTTL: config.accessTokenTtl, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } };
        },
      },
    },
    formats: {
      customizers: {
        jwt: (ctx, token, jwt) => {
          // The grant id lets every API process refuse the token once its grant is revoked.
          if ('grantId' in token && token.grantId) jwt.payload.gid = token.grantId;
          // A client-credentials app acts as its configured user.
          const user = (ctx.oidc.client as unknown as QuireClient | undefined)?.quire_user;
          if (token.kind === 'ClientCredentials' && user) jwt.payload.sub = user;
          // The token's scope names the identity scopes granted with it too, so userinfo (ours,
          // for these JWTs) knows what it may answer; they grant nothing on DocTypes.
          const identity = grantedIdentityScopes(ctx);
          if (identity.length) jwt.payload.scope = [...new Set([...cstr(jwt.payload.scope).split(' ').filter(Boolean), ...identity])].join(' ');
        },
      },
    },
    // As Frappe does, every code grant gets a refresh token (not only `offline_access` ones); it is
    // rotated on each use, and a spent one presented again revokes the whole grant (RFC 9700 §4.14).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: config.accessTokenTtl,
      ClientCredentials: config.accessTokenTtl,
      IdToken: config.accessTokenTtl,
      AuthorizationCode: config.codeTtl,
      RefreshToken: config.refreshTokenTtl,
      Grant: config.refreshTokenTtl,
      Interaction: 3600,
      Session: platform.sessionExpirySeconds,
    },
    routes: {
      authorization: '/oauth/auth',
      token: '/oauth/token',
      jwks: '/oauth/jwks',
      userinfo: '/oauth/me',
      revocation: '/oauth/token/revocation',
      introspection: '/oauth/token/introspection',
      end_session: '/oauth/session/end',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      pushed_authorization_request: '/oauth/request',
      registration: '/oauth/reg',
      backchannel_authentication: '/oauth/backchannel',
      challenge: '/oauth/challenge',
    },
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    cookies: {
      keys: deps.cookieKeys,
      long: { signed: true, path: '/' },
      short: { signed: true, path: '/' },
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.set(authPageHeaders(ctx.secure));
      ctx.body = errorPage(out.error, out.error_description ?? '');
    },
  };

  const provider = new Provider(origin, configuration);
  // Koa's proxy switch is all-or-nothing: express, in front, applies TRUST_PROXY's rules and hands
  // the provider the scheme and host it decided on (see toProvider in app.ts).
  provider.proxy = true;
  // Client secrets are stored as SHA-256 hashes (they are random 192-bit values); compare in constant time.
  provider.Client.prototype.compareClientSecret = function compare(this: { clientSecret?: string }, actual: string) {
    const hash = this.clientSecret;
    return Promise.resolve(hash ? verifyApiSecret(actual, hash) : false);
  };

  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    deps.metrics.issued(cstr(ctx.oidc.params?.grant_type ?? 'unknown'));
  });
  provider.on('grant.error', (_ctx: KoaContextWithOIDC, error: { error?: string }) => deps.metrics.refused(error.error ?? 'error'));
  provider.on('authorization.error', (_ctx: KoaContextWithOIDC, error: { error?: string }) => deps.metrics.refused(error.error ?? 'error'));
  provider.on('introspection.error', (_ctx: KoaContextWithOIDC, error: { error?: string }) => deps.metrics.refused(error.error ?? 'error'));
  provider.on('revocation.error', (_ctx: KoaContextWithOIDC, error: { error?: string }) => deps.metrics.refused(error.error ?? 'error'));
  provider.on('server_error', (_ctx: KoaContextWithOIDC, error: unknown) => deps.onError(error));
  // A revoked grant (logout, refresh-token revocation, a reused refresh token) stops its JWT access
  // tokens on every API process: a revocation record, announced in the same transaction.
  provider.on('grant.revoked', (_ctx: KoaContextWithOIDC, grantId: string) => {
    // Async from the start: finding the tenant's cluster may throw too (one no longer registered).
    const revoke = async () =>
      store.db().transaction(async (tx) => {
        await recordRevocation(tx, tenant.schema, 'grant', grantId, config.accessTokenTtl + 60);
        await platform.changes.tokenRevoked(tx, tenant, 'grant', grantId);
      });
    revoke().catch(deps.onError);
  });
  return provider;
}
