import type { TenantMeta } from '@quire/meta';
import { ALL_SCOPE, doctypeScope, IDENTITY_SCOPES, parseDoctypeScope } from '@quire/oauth';

/** OpenID Connect scopes (identity only), as oidc-provider is configured with them. */
export const OIDC_SCOPES: readonly string[] = [...IDENTITY_SCOPES];

export function isOidcScope(scope: string): boolean {
  return IDENTITY_SCOPES.has(scope);
}

/**
 * The API scopes a client may be granted: its configured scopes minus OpenID ones; a client
 * configured with `all` may also ask for any DocType's read/write scope.
 */
export function apiScopesFor(clientScopes: readonly string[], meta: TenantMeta): string[] {
  const api = new Set(clientScopes.filter((s) => !isOidcScope(s)));
  if (api.has(ALL_SCOPE)) {
    for (const m of meta.all()) {
      if (m.istable) continue;
      api.add(doctypeScope(m.name, 'read'));
      api.add(doctypeScope(m.name, 'write'));
    }
  }
  return [...api];
}

/** Plain words for the consent page. */
export function describeScope(scope: string, meta: TenantMeta): string {
  switch (scope) {
    case 'openid':
      return 'Confirm who you are';
    case 'profile':
      return 'See your name and picture';
    case 'email':
      return 'See your email address';
    case 'offline_access':
      return 'Keep this access when you are not using the app';
    case 'all':
      return 'Do everything your account can do: read, create, change and delete your records';
  }
  const parsed = parseDoctypeScope(scope);
  if (parsed) {
    const doctype = [...meta.all()].find((d) => doctypeScope(d.name, 'read') === `${parsed.doctype}:read`)?.name;
    const label = doctype ?? parsed.doctype.replace(/_/g, ' ');
    return parsed.access === 'read' ? `Read your ${label} records` : `Read, create, change and delete your ${label} records`;
  }
  return scope;
}
