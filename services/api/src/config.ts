import { loadPlatformConfig, readSettings, type PlatformConfig, type Setting, type SettingsOf } from '@quire/config';
import { z } from 'zod';

/** The API service's settings: name -> environment variable and schema. */
const apiSettings = {
  port: ['PORT', z.coerce.number().int().min(0).max(65535).default(8000)],
  /** Listen address; unset listens on every address, IPv4 and IPv6. */
  host: ['HOST', z.string().optional()],
  /** `limit=0` ("all") and larger limits are clamped to this many rows. */
  maxPageLength: ['LIST_MAX_PAGE_LENGTH', z.coerce.number().int().min(1).default(100_000)],
  maxBodySize: ['MAX_BODY_SIZE', z.string().default('25mb')],
  /** Largest upload accepted, in bytes (Frappe's max_file_size, 25 MiB). */
  maxFileSize: [
    'MAX_FILE_SIZE',
    z.coerce
      .number()
      .int()
      .min(1)
      .default(25 * 1024 * 1024),
  ],
} as const satisfies Record<string, Setting>;

export type ApiConfig = SettingsOf<typeof apiSettings> & { platform: PlatformConfig };

export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  return { platform: loadPlatformConfig(env), ...readSettings(apiSettings, env) };
}
