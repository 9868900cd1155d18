import type { Platform } from '@quire/tenancy';
import type { Logger } from 'pino';
import type { AuthConfig } from './config';
import type { AuthMetrics } from './metrics';

/** What every part of the auth service works with. */
export interface AuthContext {
  platform: Platform;
  config: AuthConfig;
  metrics: AuthMetrics;
  /** oidc-provider's cookie signing keys: the same in every process (derived from the platform key). */
  cookieKeys: string[];
  logger: Logger;
}

/** Why the implicit and password grants are refused, in every refusal's description. */
export const NOT_OFFERED =
  'The implicit and password grants are not offered (OAuth 2.0 Security Best Current Practice, RFC 9700): use the authorization code grant with PKCE';
