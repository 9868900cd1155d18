export { ProcessMetrics, type ProcessMetricsOptions, type CacheStats, type PoolState, type SpareClaimStats } from './process-metrics';
export { RouteTable, UNMATCHED } from './routes';
export { cachedReading } from './cached';
