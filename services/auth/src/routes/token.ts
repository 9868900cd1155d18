import { cstr } from '@quire/frappe-compat';
import type { Request, Response } from 'express';
import { configuredScopes, readClient, tenantStore } from '../adapter';
import { NOT_OFFERED, type AuthContext } from '../context';
import { clientCredentials, formOf, oauthError } from '../http/request';
import { isOidcScope } from '../scopes';

/**
 * The token endpoint's own rules, before oidc-provider: the password grant is refused with the
 * reason, and a client-credentials request without `scope` gets the client's configured API
 * scopes. Resolves true when it answered the request itself.
 */
export async function applyTokenPolicy({ platform, metrics }: AuthContext, req: Request, res: Response): Promise<boolean> {
  const body = formOf(req);
  const grant = cstr(body.grant_type);
  if (grant === 'password' || grant === 'implicit') {
    metrics.refused('unsupported_grant_type');
    oauthError(res, 400, 'unsupported_grant_type', NOT_OFFERED);
    return true;
  }
  if (grant === 'client_credentials' && !body.scope) {
    const { id } = clientCredentials(req);
    const row = id ? await readClient(tenantStore(platform, res.locals.tenant), id) : undefined;
    if (row)
      body.scope = configuredScopes(row)
        .filter((s) => !isOidcScope(s))
        .join(' ');
  }
  return false;
}
