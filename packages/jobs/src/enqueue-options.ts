import type { EnqueueOptions, JobQueueName } from '@quire/documents';
import { ValidationError } from '@quire/errors';
import { z } from 'zod';
import { MAX_TIMEOUT_SECONDS, QUEUE_TIMEOUTS } from './queues';

/** The largest `kwargs` a job may carry, as JSON: a job is a call, not a place to keep data. */
const MAX_KWARGS_BYTES = 256 * 1024;

const optionsSchema = z.object({
  queue: z.enum(['short', 'default', 'long']).default('default'),
  timeout: z.number().int().positive().max(MAX_TIMEOUT_SECONDS).optional(),
  jobId: z.string().min(1).max(140).optional(),
  enqueueAfterCommit: z.boolean().optional(),
  atFront: z.boolean().default(false),
  retries: z.number().int().min(0).max(25).default(0),
  backoffSeconds: z.number().int().min(0).max(3600).default(10),
  kwargs: z.record(z.string(), z.unknown()).default({}),
});

/** Enqueue options with every default applied, as the jobs table keeps them. */
export interface JobSpec {
  queue: JobQueueName;
  timeoutSeconds: number;
  jobId: string | undefined;
  atFront: boolean;
  maxAttempts: number;
  backoffSeconds: number;
  /** `kwargs` as JSON text. */
  kwargs: string;
}

/** Checks what app code passed (a mistake there is the app's, said clearly), and fills in Frappe's defaults. */
export function jobSpecOf(options: EnqueueOptions): JobSpec {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ValidationError(`Invalid enqueue option ${issue?.path.join('.') || ''}: ${issue?.message ?? 'invalid'}`, { title: 'Invalid Job' });
  }
  const o = parsed.data;
  const kwargs = JSON.stringify(o.kwargs);
  if (Buffer.byteLength(kwargs) > MAX_KWARGS_BYTES)
    throw new ValidationError(`A job's kwargs may be at most ${MAX_KWARGS_BYTES} bytes of JSON`, { title: 'Invalid Job' });
  return {
    queue: o.queue,
    timeoutSeconds: o.timeout ?? QUEUE_TIMEOUTS[o.queue],
    jobId: o.jobId,
    atFront: o.atFront,
    maxAttempts: o.retries + 1,
    backoffSeconds: o.backoffSeconds,
    kwargs,
  };
}
