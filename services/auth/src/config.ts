import { loadPlatformConfig, parse, parseTrustProxy, type PlatformConfig, type TrustProxy } from '@quire/config';
import { z } from 'zod';

const schema = z.object({
  AUTH_PORT: z.coerce.number().int().min(0).max(65535).default(8002),
  TRUST_PROXY: z.string().default('false'),
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(3600),
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).default(14 * 86_400),
  OAUTH_CODE_TTL_SECONDS: z.coerce.number().int().min(10).max(600).default(60),
});

export interface AuthConfig {
  platform: PlatformConfig;
  /** Port of `quire serve auth` (its /oauth/, /.well-known/ and /metrics). */
  port: number;
  /** Trust X-Forwarded-Proto/Host (and -For) only behind a configured proxy (TRUST_PROXY, as the API reads it). */
  trustProxy: TrustProxy;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  codeTtl: number;
}

export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const c = parse(schema, env);
  return {
    platform: loadPlatformConfig(env),
    port: c.AUTH_PORT,
    trustProxy: parseTrustProxy(c.TRUST_PROXY),
    accessTokenTtl: c.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtl: c.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
    codeTtl: c.OAUTH_CODE_TTL_SECONDS,
  };
}
