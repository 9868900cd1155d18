import { loadPlatformConfig, parse, parseTrustProxy, type PlatformConfig, type TrustProxy } from '@quire/config';
import { z } from 'zod';

const apiSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOST: z.string().optional(),
  LIST_MAX_PAGE_LENGTH: z.coerce.number().int().min(1).default(100_000),
  MAX_BODY_SIZE: z.string().default('25mb'),
  TRUST_PROXY: z.string().default('false'),
  MAX_FILE_SIZE: z.coerce.number().int().min(1).default(25 * 1024 * 1024),
});

export interface ApiConfig {
  platform: PlatformConfig;
  port: number;
  /** Listen address; unset listens on every address, IPv4 and IPv6. */
  host: string | undefined;
  /** `limit=0` ("all") and larger limits are clamped to this many rows. */
  maxPageLength: number;
  maxBodySize: string;
  /** express' `trust proxy` setting: false, true, a hop count or a list of addresses. */
  trustProxy: TrustProxy;
  /** Largest upload accepted, in bytes (Frappe's max_file_size, 25 MiB). */
  maxFileSize: number;
}

export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const c = parse(apiSchema, env);
  return {
    platform: loadPlatformConfig(env),
    port: c.PORT,
    host: c.HOST,
    maxPageLength: c.LIST_MAX_PAGE_LENGTH,
    maxBodySize: c.MAX_BODY_SIZE,
    trustProxy: parseTrustProxy(c.TRUST_PROXY),
    maxFileSize: c.MAX_FILE_SIZE,
  };
}
