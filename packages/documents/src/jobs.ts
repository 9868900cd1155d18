import { ValidationError } from '@quire/errors';
import type { DocContext, EnqueueOptions, Enqueued, JobEnqueuer, JobTarget } from './context';
import { uuid7 } from './naming';

/** frappe.enqueue and enqueue_doc as app code calls them: on a method's context and a controller hook's arguments. */
export interface JobEnqueueing {
  /** Runs `<app>.<module path>.<function>(kwargs, ctx)` in a worker, as this tenant and user. */
  enqueue(method: string, options?: EnqueueOptions): Promise<Enqueued>;
  /** Runs the document method `method` of `doctype` `name` (a controller's `methods`) in a worker, as run_doc_method runs it. */
  enqueueDoc(doctype: string, name: string, method: string, options?: EnqueueOptions): Promise<Enqueued>;
}

/**
 * Jobs a method enqueued with `enqueueAfterCommit` outside any transaction: written only once the
 * method has returned without error (then before its answer is sent), dropped if it threw.
 */
export class HeldJobs {
  private readonly held: Array<() => Promise<Enqueued>> = [];

  hold(write: () => Promise<Enqueued>): void {
    this.held.push(write);
  }

  /** Writes what was held, in order. */
  async release(): Promise<void> {
    for (const write of this.held.splice(0)) await write();
  }
}

function isTransaction(db: DocContext['db']): boolean {
  return 'afterCommit' in db;
}

function jobsOf(ctx: DocContext): JobEnqueuer {
  if (!ctx.jobs) throw new ValidationError('Background jobs are not available here', { title: 'Not Available' });
  return ctx.jobs;
}

/**
 * Enqueueing bound to a context, read when the call is made (a getter, so a context whose database
 * is a transaction enqueues in it). Given `held`, an `enqueueAfterCommit` job outside a
 * transaction waits there: its id is given at once, and it is written when the method returned.
 */
export function jobEnqueueing(ctx: () => DocContext, held?: HeldJobs): JobEnqueueing {
  const enqueue = (target: JobTarget, options: EnqueueOptions): Promise<Enqueued> => {
    const c = ctx();
    const jobs = jobsOf(c);
    if (options.enqueueAfterCommit && held && !isTransaction(c.db)) {
      const id = uuid7();
      held.hold(() => jobs.enqueue(c, target, options, id));
      return Promise.resolve({ id, created: true });
    }
    return jobs.enqueue(c, target, options);
  };
  return {
    enqueue: (method, options = {}) => enqueue({ kind: 'function', method }, options),
    enqueueDoc: (doctype, name, method, options = {}) => enqueue({ kind: 'doc_method', doctype, name, method }, options),
  };
}
