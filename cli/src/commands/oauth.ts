import { insertDoc } from '@quire/documents';
import { createSigningKey, dropExpiredKeys } from '@quire/oauth';
import type { Runtime } from '@quire/runtime';
import { UsageError, type CommandResult } from '../output';
import { ADMIN, tenantOf } from './shared';

export interface OAuthClientCreateOptions {
  tenant: string;
  appName: string;
  redirectUris: string[];
  public: boolean;
  /** `Authorization Code` (default) or `Client Credentials`. */
  grantType?: string | undefined;
  user?: string | undefined;
  scopes?: string | undefined;
  skipAuthorization: boolean;
  roles?: string | undefined;
}

/** `quire oauth-client create`: registers an app; a confidential client's secret is printed once. */
export async function oauthClientCreate(rt: Runtime, o: OAuthClientCreateOptions): Promise<CommandResult> {
  const tenant = tenantOf(rt, o.tenant);
  const grantType = o.grantType ?? 'Authorization Code';
  if (grantType !== 'Authorization Code' && grantType !== 'Client Credentials') {
    throw new UsageError('--grant-type is "Authorization Code" or "Client Credentials" (the implicit and password grants are not offered)');
  }
  const clientCredentials = grantType === 'Client Credentials';
  const ctx = await rt.platform.context(tenant, ADMIN);
  const roles = (o.roles ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const doc = await insertDoc(ctx, 'OAuth Client', {
    app_name: o.appName,
    client_type: o.public ? 'Public' : 'Confidential',
    grant_type: grantType,
    redirect_uris: o.redirectUris.join('\n'),
    scopes: o.scopes ?? (clientCredentials ? 'all' : 'all openid'),
    skip_authorization: o.skipAuthorization ? 1 : 0,
    allowed_roles: roles.map((role) => ({ role })),
    ...(o.user ? { user: o.user } : {}),
  });
  const secret = typeof doc.client_secret === 'string' && !o.public ? doc.client_secret : undefined;
  return {
    json: { tenant: tenant.name, client_id: doc.name, ...(secret ? { client_secret: secret } : {}), grant_type: doc.grant_type, scopes: doc.scopes },
    text: [
      `Client ID: ${String(doc.name)}`,
      ...(secret ? [`Client secret: ${secret}   (shown once; only its hash is stored)`] : ['Public client: no secret; PKCE is required']),
    ].join('\n'),
  };
}

/**
 * `quire oauth rotate-keys`: a new signing key signs from now on; the previous ones stay published
 * until every token they signed has expired. Every process hears of it through the invalidation bus.
 */
export async function oauthRotateKeys(rt: Runtime, tenantName: string): Promise<CommandResult> {
  const tenant = tenantOf(rt, tenantName);
  const { accessTokenTtl } = rt.config.auth;
  // On the tenant's cluster: its keys table, and the NOTIFY every process using that cluster hears.
  const { kid, dropped } = await rt.platform.dbOf(tenant).transaction(async (tx) => {
    const kid = await createSigningKey(tx, tenant.schema, rt.platform.secrets);
    // A retired key is kept while tokens it signed can still be presented (their lifetime, plus clock skew).
    const dropped = await dropExpiredKeys(tx, tenant.schema, accessTokenTtl + 300);
    await rt.platform.changes.signingKeysChanged(tx, tenant);
    return { kid, dropped };
  });
  return {
    json: { tenant: tenant.name, kid, dropped },
    text: `New signing key ${kid} for ${tenant.name}${dropped ? `; dropped ${dropped} expired key(s)` : ''}`,
  };
}
