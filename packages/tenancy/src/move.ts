import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ident, literal, PG, publishInvalidation, qualified, type Database, type Queryable, type Transaction } from '@quire/db';
import { DoesNotExistError, ValidationError } from '@quire/errors';
import { clusterName } from './clusters';
import { applySchemaDdl, readSchemaDdl } from './schema-ddl';
import type { Platform } from './platform';

/**
 * `quire tenant move <tenant> --to <cluster>`: a tenant's schema moved to another cluster while it
 * is served, with Postgres' own logical replication.
 *
 * 1. copy: the schema's tables, sequences, indexes and constraints are made on the target from the
 *    source's catalog (same schema name on both), a publication of the schema on the source and a
 *    subscription on the target copy the rows and then stream every change;
 * 2. catch up: until every table is copied and the target is close behind;
 * 3. switch: the tenant is marked moving (every API process holds its writes, reads go on), the
 *    source's tables are locked against writes (reads go on) once the writes in flight are done, a
 *    marker row written on the source is waited for on the target (so every earlier change is
 *    there), sequences and the tenant's webhook outbox rows are carried over, the source copy is
 *    sealed (a trigger refuses any write a process that missed the news would still make), and the
 *    directory names the new cluster: held writes go on there;
 * 4. clean up: subscription, replication slot and publication dropped, the source copy dropped
 *    (or kept, sealed, with `keepSource`).
 * Each step is recorded in quire.tenant_moves and can be run again: a move that stopped anywhere
 * is resumed by running it again. One move of a tenant at a time (an advisory lock).
 */

export type MoveStep = 'copying' | 'catching_up' | 'switching' | 'cleaning_up' | 'done';

export interface MoveProgress {
  step: MoveStep;
  /** Tables copied so far, of all. */
  tables?: { ready: number; total: number };
  /** How far behind the source the target is, in bytes of WAL. */
  lagBytes?: number;
}

export interface MoveInput {
  tenant: string;
  to: string;
  /** Keep the source copy (sealed against writes) for a rollback. */
  keepSource?: boolean;
  onProgress?: (progress: MoveProgress) => void;
  /**
   * Stops the move where it can be resumed: while it copies or catches up, and before its switch
   * begins (it throws the signal's reason). A switch under way, and the clean-up after it, finish.
   */
  signal?: AbortSignal;
  /** Lag (bytes of WAL) under which the switch starts (default 1 MiB). */
  switchLagBytes?: number;
  /**
   * How long the old copy is kept after the switch before it is dropped (default 10 s): a process
   * that has not re-read the directory yet (its periodic re-read is every 5 s at most) still reads it.
   */
  sourceGraceMs?: number;
}

export interface MoveReport {
  tenant: string;
  from: string;
  to: string;
  keptSource: boolean;
  /** Milliseconds of each part, and of writes held at the switch. */
  ms: { total: number; copy: number; catchUp: number; switch: number; writesHeld: number; cleanUp: number };
  /** Rows in the tenant's tables on the target when it switched. */
  rows: number;
}

interface MoveRow {
  tenant: string;
  source: string;
  target: string;
  state: 'copying' | 'sealed' | 'switched';
  keep_source: boolean;
}

const MOVED_SQLSTATE = PG.tenantMoved;
/** How long the seal waits for its marker on the target, writes held, before it gives up (and lets them go). */
const MARKER_WAIT_MS = 30_000;

/** The publication, subscription and slot of a tenant's move (its schema name is unique among tenants). */
function replicationName(schema: string): string {
  return `quire_move_${schema}`;
}

/** Platform-side and per-cluster objects a move uses: markers it waits for, the trigger function that seals a source copy. */
export async function createMoveObjects(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE quire.move_markers (
    "tenant" text NOT NULL,
    "token" text NOT NULL,
    "written_at" timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY ("tenant", "token")
  )`);
  await q.query(`CREATE FUNCTION quire.refuse_moved_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION USING ERRCODE = '${MOVED_SQLSTATE}', MESSAGE = 'this tenant moved to another cluster';
    END $$`);
}

/** The platform's record of moves (one row per tenant being moved or last moved). */
export async function createTenantMovesTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE quire.tenant_moves (
    "tenant" text PRIMARY KEY,
    "source" text NOT NULL,
    "target" text NOT NULL,
    "state" text NOT NULL CHECK ("state" IN ('copying', 'sealed', 'switched', 'done')),
    "keep_source" boolean NOT NULL DEFAULT false,
    "started_at" timestamptz NOT NULL DEFAULT now(),
    "switched_at" timestamptz,
    "finished_at" timestamptz,
    "report" jsonb
  )`);
  await q.query(`ALTER TABLE quire.tenants ADD COLUMN "moving_to" text`);
}

/** Whether `e` is a write refused by a moved tenant's sealed source copy. */
export function isMovedWrite(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === MOVED_SQLSTATE;
}

/** Moves a tenant's schema to another cluster while it is served (see above). */
export async function moveTenant(platform: Platform, input: MoveInput): Promise<MoveReport> {
  const to = clusterName(input.to);
  const started = performance.now();
  return withTryLock(platform.db, `quire:move:${input.tenant}`, async () => {
    const found = await platform.db.query<{ schema: string; cluster: string }>(`SELECT "schema", "cluster" FROM quire.tenants WHERE "name" = $1`, [
      input.tenant,
    ]);
    const tenant = found.rows[0];
    if (!tenant) throw new DoesNotExistError(`Tenant ${input.tenant} not found`);
    let move = await readMove(platform.db, input.tenant);
    if (move && move.target !== to) {
      throw new ValidationError(`A move of ${input.tenant} to ${move.target} is under way: run it again with --to ${move.target} to finish it`, {
        title: 'Move Under Way',
      });
    }
    if (!move) {
      if (tenant.cluster === to) throw new ValidationError(`Tenant ${input.tenant} is on cluster ${to} already`);
      await checkTarget(platform, tenant.cluster, to);
      await platform.db.query(
        `INSERT INTO quire.tenant_moves ("tenant", "source", "target", "state", "keep_source") VALUES ($1, $2, $3, 'copying', $4)
         ON CONFLICT ("tenant") DO UPDATE SET "source" = $2, "target" = $3, "state" = 'copying', "keep_source" = $4,
           "started_at" = now(), "switched_at" = NULL, "finished_at" = NULL, "report" = NULL`,
        [input.tenant, tenant.cluster, to, input.keepSource ?? false],
      );
      move = { tenant: input.tenant, source: tenant.cluster, target: to, state: 'copying', keep_source: input.keepSource ?? false };
    }
    const source = platform.clusters.database(move.source);
    const target = platform.clusters.database(move.target);
    const ctx: MoveContext = { platform, move, schema: tenant.schema, source, target, name: replicationName(tenant.schema), input };
    const ms = { total: 0, copy: 0, catchUp: 0, switch: 0, writesHeld: 0, cleanUp: 0 };
    let rows = 0;
    // When writes began to be held (performance.now()), for the report.
    let heldFrom: number | undefined;
    if (move.state === 'copying') {
      let at = performance.now();
      input.onProgress?.({ step: 'copying' });
      await copySchema(ctx);
      await waitForTables(ctx);
      ms.copy = performance.now() - at;
      at = performance.now();
      await catchUp(ctx);
      ms.catchUp = performance.now() - at;
      at = performance.now();
      input.signal?.throwIfAborted();
      input.onProgress?.({ step: 'switching' });
      const held = await seal(ctx);
      rows = held.rows;
      heldFrom = held.writesHeldFrom;
      move.state = 'sealed';
      ms.switch = performance.now() - at;
    }
    if (move.state === 'sealed') {
      const switchStarted = performance.now();
      await switchDirectory(ctx);
      move.state = 'switched';
      ms.writesHeld = heldFrom === undefined ? 0 : performance.now() - heldFrom;
      ms.switch += performance.now() - switchStarted;
    }
    const at = performance.now();
    input.onProgress?.({ step: 'cleaning_up' });
    await cleanUp(ctx);
    ms.cleanUp = performance.now() - at;
    ms.total = performance.now() - started;
    const report: MoveReport = {
      tenant: input.tenant,
      from: move.source,
      to: move.target,
      keptSource: move.keep_source,
      ms: roundAll(ms),
      rows,
    };
    await platform.db.query(`UPDATE quire.tenant_moves SET "state" = 'done', "finished_at" = now(), "report" = $2::jsonb WHERE "tenant" = $1`, [
      input.tenant,
      JSON.stringify(report),
    ]);
    input.onProgress?.({ step: 'done' });
    return report;
  });
}

interface MoveContext {
  platform: Platform;
  move: MoveRow;
  schema: string;
  source: Database;
  target: Database;
  /** The publication's, subscription's and slot's name. */
  name: string;
  input: MoveInput;
}

async function readMove(db: Queryable, tenant: string): Promise<MoveRow | undefined> {
  const { rows } = await db.query<MoveRow>(
    `SELECT "tenant", "source", "target", "state", "keep_source" FROM quire.tenant_moves WHERE "tenant" = $1 AND "state" <> 'done'`,
    [tenant],
  );
  return rows[0];
}

/** The target must take moves (registered, active), and both ends must speak logical replication. */
async function checkTarget(platform: Platform, from: string, to: string): Promise<void> {
  await platform.clusters.refresh();
  const record = platform.clusters.get(to);
  if (!record) throw new DoesNotExistError(`Cluster ${to} not found (quire cluster list)`);
  if (record.state !== 'active') throw new ValidationError(`Cluster ${to} is draining: no move goes there`, { title: 'Cluster Draining' });
  for (const name of [from, to]) {
    const { rows } = await platform.clusters.database(name).query<{ wal_level: string }>(`SELECT current_setting('wal_level') AS "wal_level"`);
    if (rows[0]?.wal_level !== 'logical') {
      throw new ValidationError(`Cluster ${name} has wal_level=${rows[0]?.wal_level ?? '?'}: moves need wal_level=logical on both clusters`, {
        title: 'Logical Replication Off',
      });
    }
  }
}

// ------------------------------------------------------------------------------------------ copy

/**
 * The schema on the target as the source has it, empty, then a publication and a subscription that
 * fill it. Run again after a stop: what a previous run made is kept once the subscription exists;
 * before that, the target's schema is made again from scratch.
 */
async function copySchema(ctx: MoveContext): Promise<void> {
  const { source, target, schema, name, move } = ctx;
  const subscribed = await target.query(`SELECT 1 FROM pg_subscription WHERE subname = $1`, [name]);
  if (subscribed.rows.length > 0) return;
  const ddl = await readSchemaDdl(source, schema);
  await target.transaction(async (tx) => {
    await tx.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
    await tx.query(`CREATE SCHEMA ${ident(schema)}`);
    await applySchemaDdl(tx, schema, [...ddl.tables, ...ddl.constraints]);
    // A marker of another move of this tenant, long done, must not satisfy this one's wait.
    await tx.query(`DELETE FROM quire.move_markers WHERE "tenant" = $1`, [move.tenant]);
  });
  const published = await source.query(`SELECT 1 FROM pg_publication WHERE pubname = $1`, [name]);
  if (published.rows.length === 0) {
    // Tables without a primary key replicate updates and deletes by their whole row.
    const { rows: keyless } = await source.query<{ table: string }>(
      `SELECT c.relname AS "table" FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind = 'r' AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)`,
      [schema],
    );
    for (const t of keyless) await source.query(`ALTER TABLE ${qualified(schema, t.table)} REPLICA IDENTITY FULL`);
    await source.query(
      `CREATE PUBLICATION ${ident(name)} FOR TABLES IN SCHEMA ${ident(schema)}, TABLE quire.move_markers WHERE ("tenant" = ${literal(move.tenant)})`,
    );
  }
  // CREATE SUBSCRIPTION makes the slot on the source and starts copying; it cannot run in a transaction.
  const conninfo = ctx.platform.clusters.replicationUrl(move.source);
  await target.query(`CREATE SUBSCRIPTION ${ident(name)} CONNECTION ${literal(conninfo)} PUBLICATION ${ident(name)} WITH (copy_data = true)`);
}

/** Until every table of the subscription is copied and streaming. */
async function waitForTables(ctx: MoveContext): Promise<void> {
  for (;;) {
    const { rows } = await ctx.target.query<{ total: string | number; ready: string | number }>(
      `SELECT count(*) AS "total", count(*) FILTER (WHERE r.srsubstate IN ('r', 's')) AS "ready"
       FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid WHERE s.subname = $1`,
      [ctx.name],
    );
    const total = Number(rows[0]?.total ?? 0);
    const ready = Number(rows[0]?.ready ?? 0);
    ctx.input.onProgress?.({ step: 'copying', tables: { ready, total } });
    if (total > 0 && ready === total) return;
    ctx.input.signal?.throwIfAborted();
    await sleep(100);
  }
}

/** How far (bytes of WAL) the target's slot is behind the source now. */
async function lagBytes(ctx: MoveContext): Promise<number> {
  const { rows } = await ctx.source.query<{ lag: string | number | null }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) AS "lag" FROM pg_replication_slots WHERE slot_name = $1`,
    [ctx.name],
  );
  return Number(rows[0]?.lag ?? Number.MAX_SAFE_INTEGER);
}

/** Until the target is within `switchLagBytes` of the source (so the switch waits little). */
async function catchUp(ctx: MoveContext): Promise<void> {
  const limit = ctx.input.switchLagBytes ?? 1024 * 1024;
  for (;;) {
    const lag = await lagBytes(ctx);
    ctx.input.onProgress?.({ step: 'catching_up', lagBytes: lag });
    if (lag <= limit) return;
    ctx.input.signal?.throwIfAborted();
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------- switch

/**
 * Holds the tenant's writes everywhere, waits for those in flight on the source, makes sure the
 * target has every change, carries sequences and outbox rows over and seals the source copy.
 * Returns when writes began to be held (performance.now()) and the rows on the target.
 */
async function seal(ctx: MoveContext): Promise<{ writesHeldFrom: number; rows: number }> {
  const { platform, move, schema, source, target } = ctx;
  const writesHeldFrom = performance.now();
  await platform.db.transaction(async (tx) => {
    await tx.query(`UPDATE quire.tenants SET "moving_to" = $2 WHERE "name" = $1`, [move.tenant, move.target]);
    await publishInvalidation(tx, { topic: 'tenant', tenant: move.tenant });
  });
  const { rows: tables } = await source.query<{ oid: number; table: string }>(
    `SELECT c.oid::int AS "oid", c.relname AS "table" FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname`,
    [schema],
  );
  const list = tables.map((t) => qualified(schema, t.table)).join(', ');
  try {
    await lockedAgainstWrites(
      source,
      list,
      tables.map((t) => t.oid),
      async (tx) => {
        // Every change committed on the source before this marker reaches the target before it.
        const token = randomUUID();
        await source.query(`INSERT INTO quire.move_markers ("tenant", "token") VALUES ($1, $2)`, [move.tenant, token]);
        const deadline = performance.now() + MARKER_WAIT_MS;
        for (;;) {
          const seen = await target.query(`SELECT 1 FROM quire.move_markers WHERE "tenant" = $1 AND "token" = $2`, [move.tenant, token]);
          if (seen.rows.length > 0) break;
          if (performance.now() > deadline)
            throw new Error(`The target cluster did not receive the last changes within ${MARKER_WAIT_MS / 1000} s (is replication stalled?)`);
          await sleep(5);
        }
        const { rows: sequences } = await tx.query<{ name: string; value: string | null; called: boolean }>(
          `SELECT sequencename AS "name", last_value::text AS "value", last_value IS NOT NULL AS "called" FROM pg_sequences WHERE schemaname = $1`,
          [schema],
        );
        const { rows: events } = await tx.query<Record<string, unknown>>(`SELECT * FROM quire.webhook_events WHERE "tenant" = $1`, [move.tenant]);
        // Jobs move with their tenant; one handed to a queue here waits again there (its queue entry
        // names this cluster: run there, it finds no row and is skipped).
        const { rows: jobs } = await tx.query<Record<string, unknown>>(
          `SELECT * FROM quire.jobs WHERE "tenant" = $1 AND "status" IN ('queued', 'started') FOR UPDATE`,
          [move.tenant],
        );
        const { rows: schedules } = await tx.query<Record<string, unknown>>(`SELECT * FROM quire.job_schedules WHERE "tenant" = $1`, [move.tenant]);
        await target.transaction(async (ttx) => {
          for (const s of sequences) {
            if (s.value !== null) await ttx.query(`SELECT setval($1::regclass, $2::bigint, $3)`, [`${ident(schema)}.${ident(s.name)}`, s.value, s.called]);
          }
          await copyRows(ttx, 'quire.webhook_events', events);
          await copyRows(
            ttx,
            'quire.jobs',
            jobs.map((j) => ({ ...j, status: 'queued', dispatched_at: null, lease_until: null })),
          );
          await ttx.query(`DELETE FROM quire.job_schedules WHERE "tenant" = $1`, [move.tenant]);
          for (const s of schedules) {
            await ttx.query(
              `INSERT INTO quire.job_schedules ("tenant", "job_type", "method", "queue", "cron", "stopped", "next_run_at") VALUES ($1, $2, $3, $4, $5, $6, $7)`,
              [s.tenant, s.job_type, s.method, s.queue, s.cron, s.stopped, s.next_run_at],
            );
          }
        });
        await tx.query(`DELETE FROM quire.webhook_events WHERE "tenant" = $1`, [move.tenant]);
        await tx.query(`DELETE FROM quire.jobs WHERE "tenant" = $1`, [move.tenant]);
        await tx.query(`DELETE FROM quire.job_schedules WHERE "tenant" = $1`, [move.tenant]);
        await tx.script(
          tables
            .map(
              (t) =>
                `CREATE OR REPLACE TRIGGER quire_moved BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${qualified(schema, t.table)} FOR EACH STATEMENT EXECUTE FUNCTION quire.refuse_moved_write()`,
            )
            .join(';\n'),
        );
      },
    );
  } catch (e) {
    // Not sealed: the tenant's writes go on on the source (the move can be run again).
    await releaseHold(platform, move.tenant).catch(() => {});
    throw e;
  }
  await platform.db.query(`UPDATE quire.tenant_moves SET "state" = 'sealed' WHERE "tenant" = $1`, [move.tenant]);
  // Counted once the hold is over (the target has every row now): the report's, not worth holding writes for.
  const counted = await target.query<{ n: string | number }>(
    tables.map((t) => `SELECT count(*) AS n FROM ${qualified(schema, t.table)}`).join(' UNION ALL ') || 'SELECT 0 AS n',
  );
  return { writesHeldFrom, rows: counted.rows.reduce((n, r) => n + Number(r.n), 0) };
}

/** Lets the tenant's held writes go on where it is (a seal that failed before it committed). */
async function releaseHold(platform: Platform, tenant: string): Promise<void> {
  await platform.db.transaction(async (tx) => {
    await tx.query(`UPDATE quire.tenants SET "moving_to" = NULL WHERE "name" = $1`, [tenant]);
    await publishInvalidation(tx, { topic: 'tenant', tenant });
  });
}

/** Thrown to roll the sealing transaction back when a writer queued behind its locks. */
class WriterWaiting extends Error {}

/**
 * Runs `fn` in a source transaction holding EXCLUSIVE locks on every table (writes wait, reads go
 * on), committed only if no writer is queued behind them then: a writer that passed the API's hold
 * before its process heard of the move would otherwise meet the sealed copy. Such a writer is let
 * through (the transaction rolled back, its write replicated like any other) and the whole of `fn`
 * done again; `fn` must be safe to repeat.
 */
async function lockedAgainstWrites(source: Database, list: string, oids: number[], fn: (tx: Transaction) => Promise<void>): Promise<void> {
  const waiting = async (tx: Transaction): Promise<boolean> => {
    const { rows } = await tx.query<{ n: string | number }>(`SELECT count(*) AS n FROM pg_locks WHERE NOT granted AND relation = ANY($1::oid[])`, [oids]);
    return Number(rows[0]?.n ?? 0) > 0;
  };
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= 50;
    const settled = await source
      .transaction(async (tx) => {
        await tx.query(`SET LOCAL lock_timeout = '10s'`);
        await tx.query(`LOCK TABLE ${list} IN EXCLUSIVE MODE`);
        if (!last && (await waiting(tx))) throw new WriterWaiting();
        await fn(tx);
        // The last thing before COMMIT: nobody may be queued behind the seal.
        if (!last && (await waiting(tx))) throw new WriterWaiting();
        return true;
      })
      .catch((e: unknown) => {
        if (e instanceof WriterWaiting) return false;
        throw e;
      });
    if (settled) return;
    await sleep(20);
  }
}

/** Upserts rows (as read with SELECT *) into `table` by "id": a copy made again replaces the one before. */
async function copyRows(tx: Transaction, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (const row of rows) {
    const columns = Object.keys(row);
    const updates = columns.filter((c) => c !== 'id').map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`);
    await tx.query(
      `INSERT INTO ${table} (${columns.map(ident).join(', ')}) VALUES (${columns.map((_c, i) => `$${i + 1}`).join(', ')})
       ON CONFLICT ("id") DO UPDATE SET ${updates.join(', ')}`,
      columns.map((c) => {
        const v = row[c];
        return v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v;
      }),
    );
  }
}

/** The directory names the target: every process serves the tenant from there and lets its held writes go. */
async function switchDirectory(ctx: MoveContext): Promise<void> {
  const { platform, move } = ctx;
  await platform.db.transaction(async (tx) => {
    await tx.query(`UPDATE quire.tenants SET "cluster" = $2, "moving_to" = NULL WHERE "name" = $1`, [move.tenant, move.target]);
    await tx.query(`UPDATE quire.tenant_moves SET "state" = 'switched', "switched_at" = now() WHERE "tenant" = $1`, [move.tenant]);
    await publishInvalidation(tx, { topic: 'tenant', tenant: move.tenant });
  });
  await platform.tenants.refreshOne(move.tenant);
  platform.forget(move.tenant);
}

// -------------------------------------------------------------------------------------- clean up

/** Subscription, slot, publication and markers gone from both sides; the source copy dropped unless kept. */
async function cleanUp(ctx: MoveContext): Promise<void> {
  const { source, target, name, schema, move } = ctx;
  const subscribed = await target.query(`SELECT 1 FROM pg_subscription WHERE subname = $1`, [name]);
  if (subscribed.rows.length > 0) {
    // Detached from its slot first, so dropping it never waits on the source.
    await target.query(`ALTER SUBSCRIPTION ${ident(name)} DISABLE`);
    await target.query(`ALTER SUBSCRIPTION ${ident(name)} SET (slot_name = NONE)`);
    await target.query(`DROP SUBSCRIPTION ${ident(name)}`);
  }
  // The slot's walsender may take a moment to let go of it once the subscription is gone.
  for (let i = 0; ; i++) {
    const { rows } = await source.query<{ active: boolean }>(`SELECT active FROM pg_replication_slots WHERE slot_name = $1`, [name]);
    if (!rows[0]) break;
    if (!rows[0].active) {
      await source.query(`SELECT pg_drop_replication_slot($1)`, [name]);
      break;
    }
    // A slot left behind would keep WAL on the source for good: the move is not done until it is gone.
    if (i >= 200) throw new Error(`Replication slot ${name} on cluster ${move.source} is still in use: run the move again to finish its clean-up`);
    await sleep(50);
  }
  await source.query(`DROP PUBLICATION IF EXISTS ${ident(name)}`);
  await source.query(`DELETE FROM quire.move_markers WHERE "tenant" = $1`, [move.tenant]);
  await target.query(`DELETE FROM quire.move_markers WHERE "tenant" = $1`, [move.tenant]);
  if (!move.keep_source) {
    await sleep(ctx.input.sourceGraceMs ?? 10_000);
    await source.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
  }
}

// ------------------------------------------------------------------------------------------ util

/** Runs `fn` holding the advisory lock `key` on a connection of its own, or refuses when another holds it. */
async function withTryLock<T>(db: Database, key: string, fn: () => Promise<T>): Promise<T> {
  return db.transaction(async (lock) => {
    await lock.query(`SET LOCAL statement_timeout = 0`);
    await lock.query(`SET LOCAL idle_in_transaction_session_timeout = 0`);
    const { rows } = await lock.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok`, [key]);
    if (!rows[0]?.ok) throw new ValidationError('Another move of this tenant is running', { title: 'Move Under Way' });
    return fn();
  });
}

function roundAll<T extends Record<string, number>>(ms: T): T {
  return Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, Math.round(v)])) as T;
}
