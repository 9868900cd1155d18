import { AuthenticationError } from '@quire/errors';
import { localsOf } from '@quire/http';
import type { Platform } from '@quire/tenancy';
import type { Request } from 'express';
import type { Logger } from 'pino';
import { Strategy } from 'passport-strategy';

/**
 * OAuth 2.0 access tokens (RFC 6750 `Authorization: Bearer <token>`): RFC 9068 JWTs of the
 * tenant's issuer, verified in this process against the tenant's JWKS (platform.oauth). The caller
 * is the token's user with the token's scopes applied to every permission check. Any refusal
 * (bad signature, another tenant's token, expired, revoked, disabled user, …) is a 401
 * AuthenticationError, as for a bad API key; the reason goes to the debug log only (never to the caller).
 */
export class BearerStrategy extends Strategy {
  name = 'bearer';

  constructor(
    private readonly platform: Platform,
    private readonly logger: Logger,
  ) {
    super();
  }

  override authenticate(req: Request): void {
    const token = (req.headers.authorization ?? '').split(' ')[1] ?? '';
    const { tenant, requestId } = localsOf(req);
    // DEFAULT_TENANT is reached on any address: the host this request came to may be its issuer's.
    const hosts = this.platform.issuerHosts(tenant, req.hostname);
    this.platform.oauth.authenticateBearer(tenant, token, hosts).then(
      (outcome) => {
        if (outcome.ok) {
          this.success(outcome.principal);
          return;
        }
        this.logger.debug({ requestId, tenant: tenant.name, reason: outcome.reason }, 'bearer token refused');
        req.res?.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
        this.error(new AuthenticationError('', { silent: true }));
      },
      (e: unknown) => this.error(e as Error),
    );
  }
}
