export { ProcessMetrics, type ProcessMetricsOptions, type CacheStats, type PoolState, type SpareClaimStats, type AdmissionStats } from './process-metrics';
export { RouteTable, UNMATCHED } from './routes';
export { cachedReading } from './cached';
