/**
 * The `aud` of a tenant's access tokens (RFC 9068 §3): one resource server per tenant, named
 * independently of the hosts it is reached at, so a token of tenant A is refused at tenant B even
 * when both trust the same issuer host (DEFAULT_TENANT on a bare address).
 */
export const TENANT_AUDIENCE_PREFIX = 'urn:quire:tenant:';

export function tenantAudience(tenantName: string): string {
  return `${TENANT_AUDIENCE_PREFIX}${tenantName}`;
}
