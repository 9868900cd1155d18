export { createJobsTable, deleteTenantJobs } from './jobs-table';
export { JobOutbox, type JobsListener } from './job-outbox';
export { jobSpecOf, type JobSpec } from './enqueue-options';
export { QUEUE_NAMES, QUEUE_TIMEOUTS, MAX_TIMEOUT_SECONDS } from './queues';
export { pickFairly, releaseLost, readBacklog, type PickedJob } from './fair-pick';
export { runJob, type JobRunDeps, type RunOutcome } from './run-job';
export type { JobLane, JobLanes } from './job-lanes';
export { InProcessJobRunner, type InProcessRunnerOptions } from './in-process-runner';
export { QueueJobRunner, bullQueueName, type QueueRunnerOptions } from './queue-runner';
export { JobsWakeProducer, jobsWakeChannel } from './wake';
export { createScheduleTable, deleteTenantSchedules } from './schedule-table';
export {
  schedulerLagSeconds,
  syncSchedules,
  syncScheduledJobTypes,
  indexDeclaredSchedules,
  upsertSchedule,
  deleteSchedule,
  tickSchedules,
  jobTypeName,
  SCHEDULER_USER,
} from './schedules';
export { FREQUENCIES, EVENT_FREQUENCIES, cronOf, nextRunAfter, isFrequency, type Frequency } from './frequencies';
export {
  listTenantJobs,
  countTenantJobs,
  getTenantJob,
  deleteTenantJob,
  cancelTenantJob,
  retryTenantJob,
  type JobRecord,
  type JobFilter,
  type JobQuery,
} from './job-records';
export {
  createWorkersTable,
  heartbeat,
  removeWorker,
  liveWorkers,
  liveWorker,
  WorkerStats,
  HEARTBEAT_MS,
  type WorkerRecord,
  type WorkerReport,
} from './worker-registry';
