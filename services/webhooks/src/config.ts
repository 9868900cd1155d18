import { loadPlatformConfig, readSettings, type PlatformConfig, type Setting, type SettingsOf } from '@quire/config';
import { DEFAULT_RETRY_POLICY, parseCidrList, type RetryPolicy } from '@quire/webhooks';
import { z } from 'zod';

/** The webhooks service's settings: name -> environment variable and schema. */
const webhooksSettings = {
  /** Wake-ups through Redis when set (API and CLI publish, webhooks processes listen); otherwise delivery runs in-process. */
  redisUrl: [
    'REDIS_URL',
    z
      .string()
      .trim()
      .optional()
      .transform((v) => (v === '' ? undefined : v)),
  ],
  /** Networks webhooks may reach although private (tests: 127.0.0.1/32). */
  allowNets: [
    'WEBHOOK_ALLOW_NETS',
    z
      .string()
      .default('')
      .transform((v, ctx) => {
        try {
          return parseCidrList(v);
        } catch (e) {
          ctx.addIssue({ code: 'custom', message: (e as Error).message });
          return z.NEVER;
        }
      }),
  ],
  /**
   * The prefix of the deployment's wake-up channel (`<prefix>:quire-webhooks:wake`). Unset:
   * `quire:<deployment id>` (kept in the database), so deployments sharing a Redis never wake each other.
   */
  queuePrefix: [
    'WEBHOOK_QUEUE_PREFIX',
    z
      .string()
      .trim()
      .optional()
      .transform((v) => (v === '' ? undefined : v)),
  ],
  /** Delivery requests in flight per process (one slow receiver holds a slot until its timeout). */
  concurrency: ['WEBHOOK_CONCURRENCY', z.coerce.number().int().min(1).max(500).default(64)],
  /** One tenant's deliveries in flight at once in each process (unset: half of WEBHOOK_CONCURRENCY): a slow receiver holds its tenant's share only. */
  tenantMaxInFlight: ['WEBHOOK_TENANT_MAX_IN_FLIGHT', z.coerce.number().int().min(1).optional()],
  sweepIntervalMs: ['WEBHOOK_SWEEP_INTERVAL_MS', z.coerce.number().int().min(10).default(2000)],
  leaseMarginMs: ['WEBHOOK_LEASE_MARGIN_MS', z.coerce.number().int().min(100).default(10_000)],
  retryBaseDelayMs: ['WEBHOOK_RETRY_BASE_MS', z.coerce.number().int().min(1).default(DEFAULT_RETRY_POLICY.baseDelayMs)],
  retryMaxDelayMs: ['WEBHOOK_RETRY_MAX_DELAY_MS', z.coerce.number().int().min(1).default(DEFAULT_RETRY_POLICY.maxDelayMs)],
  retryMaxAgeMs: ['WEBHOOK_RETRY_MAX_AGE_MS', z.coerce.number().int().min(1).default(DEFAULT_RETRY_POLICY.maxAgeMs)],
  retryJitter: ['WEBHOOK_RETRY_JITTER', z.coerce.number().min(0).max(1).default(DEFAULT_RETRY_POLICY.jitter)],
  /** The operations port of a process serving only webhooks when METRICS_PORT is unset (the older name). */
  port: ['WEBHOOKS_PORT', z.coerce.number().int().min(0).max(65535).optional()],
} as const satisfies Record<string, Setting>;

type RetrySettings = 'retryBaseDelayMs' | 'retryMaxDelayMs' | 'retryMaxAgeMs' | 'retryJitter';

export type WebhooksConfig = Omit<SettingsOf<typeof webhooksSettings>, RetrySettings> & { retry: RetryPolicy; platform: PlatformConfig };

export function loadWebhooksConfig(env: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  const { retryBaseDelayMs, retryMaxDelayMs, retryMaxAgeMs, retryJitter, ...rest } = readSettings(webhooksSettings, env);
  return {
    platform: loadPlatformConfig(env),
    ...rest,
    retry: { baseDelayMs: retryBaseDelayMs, maxDelayMs: retryMaxDelayMs, maxAgeMs: retryMaxAgeMs, jitter: retryJitter },
  };
}
