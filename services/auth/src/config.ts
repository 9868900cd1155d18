import { loadPlatformConfig, readSettings, type PlatformConfig, type Setting, type SettingsOf } from '@quire/config';
import { z } from 'zod';

/** The auth service's settings: name -> environment variable and schema. */
const authSettings = {
  /** Port of `quire serve auth` (its /oauth/, /.well-known/ and /metrics). */
  port: ['AUTH_PORT', z.coerce.number().int().min(0).max(65535).default(8002)],
  accessTokenTtl: ['OAUTH_ACCESS_TOKEN_TTL_SECONDS', z.coerce.number().int().min(30).max(86_400).default(3600)],
  refreshTokenTtl: [
    'OAUTH_REFRESH_TOKEN_TTL_SECONDS',
    z.coerce
      .number()
      .int()
      .min(60)
      .default(14 * 86_400),
  ],
  codeTtl: ['OAUTH_CODE_TTL_SECONDS', z.coerce.number().int().min(10).max(600).default(60)],
} as const satisfies Record<string, Setting>;

export type AuthConfig = SettingsOf<typeof authSettings> & { platform: PlatformConfig };

export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  return { platform: loadPlatformConfig(env), ...readSettings(authSettings, env) };
}
