import type { JobQueueName } from '@quire/documents';

/** Frappe's queues and their default timeouts in seconds (frappe/utils/background_jobs.py). */
export const QUEUE_TIMEOUTS: Readonly<Record<JobQueueName, number>> = { short: 300, default: 300, long: 1500 };

export const QUEUE_NAMES = Object.keys(QUEUE_TIMEOUTS) as JobQueueName[];

/** The longest a job may be given: a lease of a worker that never ends would keep its job forever. */
export const MAX_TIMEOUT_SECONDS = 6 * 3600;
