import type { SecretBox } from '@quire/auth';
import type { ChangeNotifier, Executor, Queryable } from '@quire/db';
import type { TenantMeta, TenantRef } from '@quire/meta';
import type { Principal } from '@quire/permissions';
import type { ControllerRegistry } from './controllers';

/**
 * What every document operation runs with: the tenant, its metadata, who is calling, and where
 * SQL goes. The same context serves the API, the CLI and the workers.
 */
export interface DocContext {
  /** The database, or the transaction this operation is part of (then nested writes are savepoints). */
  db: Executor;
  tenant: TenantRef;
  meta: TenantMeta;
  principal: Principal;
  controllers: ControllerRegistry;
  /** Where writes report changes that caches elsewhere depend on. */
  changes: ChangeNotifier;
  /** Where uploaded files' bytes live (File documents point at them). */
  files: FileStore;
  /** Encrypts Password fields' values (reversibly) for `__Auth`. */
  secrets: SecretBox;
  /** What the tenant's plan still allows (database size, users, file storage); absent, nothing is limited. */
  quota?: WriteQuota | undefined;
  /** Where background jobs are enqueued (Frappe's frappe.enqueue); absent, enqueueing is refused. */
  jobs?: JobEnqueuer | undefined;
}

/** Frappe's queues, by their short names; each has its own default timeout (300, 300 and 1,500 s). */
export type JobQueueName = 'short' | 'default' | 'long';

/** frappe.enqueue's options, as an app passes them. */
export interface EnqueueOptions {
  queue?: JobQueueName;
  /** Seconds the job may run; the queue's default otherwise. */
  timeout?: number;
  /** While a job with this id is queued or running, enqueueing another with it does nothing (Frappe's `job_id` with `deduplicate`). */
  jobId?: string;
  /**
   * Outside a transaction, hold the job until the call that enqueued it (a method) has returned
   * without error; inside one, the job is written with the transaction whatever this says (a
   * rolled-back transaction never runs it, a committed one never loses it).
   */
  enqueueAfterCommit?: boolean;
  /** Ahead of the queue's other jobs of the same tenant. */
  atFront?: boolean;
  /** Times the job is tried again after failing (none by default, as in Frappe); each wait doubles from `backoffSeconds`. */
  retries?: number;
  backoffSeconds?: number;
  /** The function's arguments (JSON). */
  kwargs?: Record<string, unknown>;
}

/** What enqueueing answers: the job's id, or that a job with the same `jobId` is already queued or running. */
export interface Enqueued {
  id: string;
  /** False when deduplicated: `id` is then the job already waiting or running. */
  created: boolean;
}

/** What a job is: a function by its dotted path, or a document method (run_doc_method). */
export type JobTarget = { kind: 'function'; method: string } | { kind: 'doc_method'; doctype: string; name: string; method: string };

/** Writes jobs for one platform: in `ctx.db`'s transaction when it is one, else at once. */
export interface JobEnqueuer {
  /** `id`: the job's id when the caller already gave it out (a held job); a new one otherwise. */
  enqueue(ctx: DocContext, target: JobTarget, options: EnqueueOptions, id?: string): Promise<Enqueued>;
}

/** A tenant's plan, asked before it grows: each call throws QuotaExceededError when the plan allows no more. */
export interface WriteQuota {
  /** Before a document is inserted; `byCaller` when the caller asked for it, not the platform's own bookkeeping (a Version, a log). */
  beforeInsert(q: Queryable, doctype: string, byCaller: boolean): Promise<void>;
  /** Before an upload of `bytes` is stored. */
  beforeStoring(q: Queryable, bytes: number): Promise<void>;
}

/** Storage for uploaded files (local disk by default; a cloud store implements the same three calls). */
export interface FileStore {
  /** Stores bytes under a key (overwriting). */
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  /** The bytes under a key, or undefined. */
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
  /** Deletes every key under a prefix (`<schema>`: all of a tenant's files); nothing there is fine. */
  deleteAll(prefix: string): Promise<void>;
}

/** Frappe's `doc.flags.ignore_*`: for installers and trusted internal callers, never for request input. */
export interface WriteFlags {
  ignorePermissions?: boolean;
  ignoreLinks?: boolean;
  ignoreMandatory?: boolean;
  /** Keep `owner`, `creation` and `modified` as given (installing fixtures, migrations). */
  keepTimestamps?: boolean;
  /** Writing the platform's own standard records (installing or migrating a tenant). */
  installing?: boolean;
  /** Insert under exactly this name (installers: Administrator, Guest). */
  name?: string;
  /**
   * Checked against the stored document (as read, locked, in the write's transaction) before
   * anything else; throws to refuse the update or delete (HTTP `If-Match`).
   */
  precondition?: (stored: DocData) => void;
}

/** A document as plain data: field values, and each Table field as an array of row objects. */
export type DocData = Record<string, unknown>;

export type { ChangeNotifier };
