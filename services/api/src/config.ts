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
  /** Quick requests one tenant may have in progress in a process at once (default half of DB_POOL_SIZE; slow ones: half the cores; server.ts). */
  tenantMaxConnections: ['TENANT_MAX_CONNECTIONS', z.coerce.number().int().min(1).optional()],
  /** Requests one tenant may have waiting for its turn in a process; more are answered 429 at once. */
  tenantQueueLength: ['TENANT_QUEUE_LENGTH', z.coerce.number().int().min(0).default(100)],
  /** How long a request may wait for its tenant's turn before it is answered 429 (and while its queue is this old, new ones are at once). */
  tenantQueueWaitMs: ['TENANT_QUEUE_WAIT_MS', z.coerce.number().int().min(0).default(2000)],
} as const satisfies Record<string, Setting>;

export type ApiConfig = SettingsOf<typeof apiSettings> & { platform: PlatformConfig };

export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  return { platform: loadPlatformConfig(env), ...readSettings(apiSettings, env) };
}
