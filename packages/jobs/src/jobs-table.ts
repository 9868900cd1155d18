import type { Queryable } from '@quire/db';

/**
 * `quire.jobs`: every background job, on the cluster of its tenant (beside `quire.webhook_events`),
 * written in the transaction that enqueues it. Postgres is the source of truth: BullMQ carries the
 * jobs the feeder handed it (`dispatched_at`), and what "RQ Job" shows is read here. Created by the
 * platform schema's migration `0015_jobs` and each other cluster's `cluster:0003_jobs`.
 */
export async function createJobsTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE quire.jobs (
    "id" uuid PRIMARY KEY,
    "tenant" text NOT NULL,
    "queue" text NOT NULL CHECK ("queue" IN ('short', 'default', 'long')),
    "kind" text NOT NULL CHECK ("kind" IN ('function', 'doc_method')),
    "method" text NOT NULL,
    "reference_doctype" text,
    "reference_name" text,
    "kwargs" jsonb NOT NULL DEFAULT '{}'::jsonb,
    "user" text NOT NULL,
    "job_id" text,
    "status" text NOT NULL DEFAULT 'queued' CHECK ("status" IN ('queued', 'started', 'finished', 'failed', 'canceled')),
    "at_front" boolean NOT NULL DEFAULT false,
    "timeout_s" integer NOT NULL,
    "max_attempts" integer NOT NULL DEFAULT 1,
    "backoff_s" integer NOT NULL DEFAULT 0,
    "attempts" integer NOT NULL DEFAULT 0,
    "scheduled_job_type" text,
    "created_at" timestamp(6) NOT NULL DEFAULT (clock_timestamp() at time zone 'utc'),
    "available_at" timestamp(6) NOT NULL DEFAULT (clock_timestamp() at time zone 'utc'),
    "dispatched_at" timestamp(6),
    "lease_until" timestamp(6),
    "started_at" timestamp(6),
    "ended_at" timestamp(6),
    "worker" text,
    "error" text
  )`);
  // jobId deduplicates only while such a job waits or runs; a finished one lets the same id run again.
  await q.query(`CREATE UNIQUE INDEX jobs_dedup ON quire.jobs ("tenant", "job_id") WHERE "job_id" IS NOT NULL AND "status" IN ('queued', 'started')`);
  // What the feeder picks from: jobs waiting to be handed to a queue, per queue and tenant in order.
  await q.query(`CREATE INDEX jobs_waiting ON quire.jobs ("queue", "tenant", "at_front" DESC, "id") WHERE "status" = 'queued' AND "dispatched_at" IS NULL`);
  // How many of a tenant's jobs are handed out, for fair picking; and what the lost-job sweep looks at.
  await q.query(`CREATE INDEX jobs_handed_out ON quire.jobs ("queue", "tenant") WHERE "dispatched_at" IS NOT NULL AND "status" IN ('queued', 'started')`);
  // The backlog per queue (metrics), and what the retention sweep deletes.
  await q.query(`CREATE INDEX jobs_queued ON quire.jobs ("queue", "created_at") WHERE "status" = 'queued'`);
  await q.query(`CREATE INDEX jobs_ended ON quire.jobs ("ended_at") WHERE "status" IN ('finished', 'failed', 'canceled')`);
  // A tenant's jobs, newest first ("RQ Job").
  await q.query(`CREATE INDEX jobs_tenant ON quire.jobs ("tenant", "created_at" DESC)`);
}

/** A dropped tenant's jobs (its schema is gone: nothing can run them). */
export async function deleteTenantJobs(q: Queryable, tenant: string): Promise<void> {
  await q.query(`DELETE FROM quire.jobs WHERE "tenant" = $1`, [tenant]);
}
