export { loadWorkerConfig, type WorkerConfig } from './config';
export { startWorkerService, type WorkerService } from './service';
export { JobMetrics } from './metrics';
