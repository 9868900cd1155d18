export { PostgresRateCounter, createRateCountersTable, RATE_COUNTERS_TABLE, type RateCounter, type Hit } from './rate-counter';
export { enforceRateLimits, type RateLimitRule, type RateLimitedCall } from './rate-limit';
export { clientBucket } from './client-address';
export { TenantGate, type TenantGateOptions, type TenantGateStats, type Refusal, type Release } from './tenant-gate';
export {
  SiteRateLimiter,
  PostgresWindowStore,
  RedisWindowStore,
  createRateWindowsTable,
  RATE_WINDOWS_TABLE,
  type SiteRateLimit,
  type SiteRateLimiterOptions,
  type RateCheck,
  type WindowStore,
  type WindowEntry,
  type RedisCommands,
  type RedisPipeline,
} from './site-rate-limit';
