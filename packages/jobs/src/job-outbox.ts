import { docMethodOf, type LoadedApps } from '@quire/apps';
import type { Transaction } from '@quire/db';
import { uuid7, type DocContext, type EnqueueOptions, type Enqueued, type JobEnqueuer, type JobTarget } from '@quire/documents';
import { ValidationError } from '@quire/errors';
import { jobSpecOf } from './enqueue-options';

/** Told after a job was written (after commit when written in a transaction): whatever feeds the queues looks at its tenant. */
export type JobsListener = (tenant: string) => void;

/**
 * frappe.enqueue for every tenant of a platform: a row in `quire.jobs` on the tenant's cluster,
 * through the caller's executor — in its transaction when it is one (rolled back, it never runs;
 * committed, it is never lost, whatever happens to the process next), else committed at once.
 */
export class JobOutbox implements JobEnqueuer {
  private readonly listeners = new Set<JobsListener>();

  constructor(private readonly apps: LoadedApps) {}

  /** Subscribes to written jobs; returns the unsubscribe function. */
  onEnqueued(listener: JobsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async enqueue(ctx: DocContext, target: JobTarget, options: EnqueueOptions, id: string = uuid7()): Promise<Enqueued> {
    this.requireTarget(target);
    const spec = jobSpecOf(options);
    const { rows } = await ctx.db.query<{ id: string }>(
      `INSERT INTO quire.jobs ("id", "tenant", "queue", "kind", "method", "reference_doctype", "reference_name", "kwargs", "user", "job_id", "at_front", "timeout_s", "max_attempts", "backoff_s")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14)
       ON CONFLICT ("tenant", "job_id") WHERE "job_id" IS NOT NULL AND "status" IN ('queued', 'started') DO NOTHING
       RETURNING "id"`,
      [
        id,
        ctx.tenant.name,
        spec.queue,
        target.kind,
        target.method,
        target.kind === 'doc_method' ? target.doctype : null,
        target.kind === 'doc_method' ? target.name : null,
        spec.kwargs,
        ctx.principal.user,
        spec.jobId ?? null,
        spec.atFront,
        spec.timeoutSeconds,
        spec.maxAttempts,
        spec.backoffSeconds,
      ],
    );
    if (rows[0]) {
      this.wakeAfter(ctx, ctx.tenant.name);
      return { id: rows[0].id, created: true };
    }
    const existing = await ctx.db.query<{ id: string }>(
      `SELECT "id" FROM quire.jobs WHERE "tenant" = $1 AND "job_id" = $2 AND "status" IN ('queued', 'started') LIMIT 1`,
      [ctx.tenant.name, spec.jobId],
    );
    return { id: existing.rows[0]?.id ?? id, created: false };
  }

  private requireTarget(target: JobTarget): void {
    if (target.kind === 'function') {
      if (!this.apps.functions.has(target.method)) throw new ValidationError(`No function named ${target.method} to enqueue`, { title: 'Invalid Job' });
      return;
    }
    if (!docMethodOf(this.apps, target.doctype, target.method)) {
      throw new ValidationError(`${target.doctype} has no document method ${target.method} to enqueue`, { title: 'Invalid Job' });
    }
  }

  private wakeAfter(ctx: DocContext, tenant: string): void {
    const wake = () => {
      for (const listener of this.listeners) listener(tenant);
    };
    if ('afterCommit' in ctx.db) (ctx.db as Transaction).afterCommit(wake);
    else wake();
  }
}
