import { loadPlatformConfig, parse, type PlatformConfig } from '@quire/config';
import { DEFAULT_RETRY_POLICY, parseCidrList, type Cidr, type RetryPolicy } from '@quire/webhooks';
import { z } from 'zod';

const schema = z.object({
  REDIS_URL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v)),
  WEBHOOK_ALLOW_NETS: z.string().default(''),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(16),
  WEBHOOK_SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).default(2000),
  WEBHOOK_LOCK_DURATION_MS: z.coerce.number().int().min(1000).default(15_000),
  WEBHOOK_LEASE_MARGIN_MS: z.coerce.number().int().min(100).default(10_000),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).default(DEFAULT_RETRY_POLICY.baseDelayMs),
  WEBHOOK_RETRY_MAX_DELAY_MS: z.coerce.number().int().min(1).default(DEFAULT_RETRY_POLICY.maxDelayMs),
  WEBHOOK_RETRY_MAX_AGE_MS: z.coerce.number().int().min(1).default(DEFAULT_RETRY_POLICY.maxAgeMs),
  WEBHOOK_RETRY_JITTER: z.coerce.number().min(0).max(1).default(DEFAULT_RETRY_POLICY.jitter),
  WEBHOOKS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
});

export interface WebhooksConfig {
  platform: PlatformConfig;
  /** BullMQ on Redis when set; otherwise delivery sweeps the outbox in-process. */
  redisUrl: string | undefined;
  /** Networks webhooks may reach although private (tests: 127.0.0.1/32). */
  allowNets: Cidr[];
  concurrency: number;
  sweepIntervalMs: number;
  lockDurationMs: number;
  leaseMarginMs: number;
  retry: RetryPolicy;
  /** Port of the service's /metrics and /healthz; unset: 8001 for `serve webhooks`, any free port beside the API. */
  port: number | undefined;
}

export function loadWebhooksConfig(env: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  const c = parse(schema, env);
  let allowNets: Cidr[];
  try {
    allowNets = parseCidrList(c.WEBHOOK_ALLOW_NETS);
  } catch (e) {
    throw new Error(`Invalid configuration:\n  WEBHOOK_ALLOW_NETS: ${(e as Error).message}`);
  }
  return {
    platform: loadPlatformConfig(env),
    redisUrl: c.REDIS_URL,
    allowNets,
    concurrency: c.WEBHOOK_CONCURRENCY,
    sweepIntervalMs: c.WEBHOOK_SWEEP_INTERVAL_MS,
    lockDurationMs: c.WEBHOOK_LOCK_DURATION_MS,
    leaseMarginMs: c.WEBHOOK_LEASE_MARGIN_MS,
    retry: { baseDelayMs: c.WEBHOOK_RETRY_BASE_MS, maxDelayMs: c.WEBHOOK_RETRY_MAX_DELAY_MS, maxAgeMs: c.WEBHOOK_RETRY_MAX_AGE_MS, jitter: c.WEBHOOK_RETRY_JITTER },
    port: c.WEBHOOKS_PORT,
  };
}
