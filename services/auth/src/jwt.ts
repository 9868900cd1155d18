import { AccessTokenError, type VerifiedAccessToken } from '@quire/oauth';
import type { Platform, Tenant } from '@quire/tenancy';

/**
 * A tenant's JWT access token as the API reads it (platform.oauth's verifier: signature, audience,
 * issuer host, expiry, revocation), for the endpoints oidc-provider cannot serve for JWTs it does
 * not store (revocation, introspection, userinfo). Undefined when the token is not (or no longer)
 * good.
 */
export async function readAccessToken(platform: Platform, tenant: Tenant, token: string, requestHost: string): Promise<VerifiedAccessToken | undefined> {
  if (token.split('.').length !== 3) return undefined;
  try {
    return await platform.oauth.verifier.verify(token, tenant, platform.issuerHosts(tenant, requestHost));
  } catch (e) {
    if (e instanceof AccessTokenError) return undefined;
    throw e;
  }
}
