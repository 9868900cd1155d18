import type { Queryable } from '@quire/db';
import { hashName, newChildRow, type DocContext, type DocData } from '@quire/documents';
import { PARAM_CAST, type ColumnInfo, type Meta, type ValueKind } from '@quire/meta';
import { outcomesParams, outcomesUpdate, type EventOutcome } from './events';

/**
 * The bookkeeping of many delivery attempts in one statement (so one implicit transaction and one
 * round trip): each tenant's Webhook Request Log rows in one multi-row INSERT, the events' new states
 * in one UPDATE, and the webhooks a 410 retired disabled. Rows are built as `insertDoc` would store
 * them — the DocType's defaults and coercions (`newChildRow`), a `hash` name (`hashName`, the
 * DocType's autoname), owner/creation/modified/modified_by, docstatus and idx — without running the
 * document lifecycle per row (no controller of this DocType does anything). Table and columns come
 * from the tenant's metadata; every value is a parameter.
 */

export const REQUEST_LOG = 'Webhook Request Log';

/** A Webhook Request Log row with every column of the tenant's DocType filled as an insert would. */
export function requestLogRow(ctx: DocContext, fields: DocData, at: string): DocData {
  const rule = ctx.meta.require(REQUEST_LOG).namingRule;
  if (rule !== 'hash') throw new Error(`${REQUEST_LOG} is named by "${rule}": batched log rows can only be named as "hash" names them`);
  const row = newChildRow(ctx.meta, REQUEST_LOG, ctx.principal, fields);
  const user = ctx.principal.user;
  return Object.assign(row, { name: hashName(), owner: user, creation: at, modified: at, modified_by: user, docstatus: 0, idx: 0 });
}

/** One tenant's share of a batch. */
export interface TenantBookkeeping {
  /** The tenant's Webhook Request Log DocType (its table and columns). */
  log: Meta;
  rows: DocData[];
  /** The tenant's Webhook DocType, and the webhooks to disable (a receiver answered 410). */
  webhook: Meta;
  disable: string[];
}

/** Element type of the array parameter that fills a column of each kind. */
const ARRAY_TYPE: Record<ValueKind, string> = { ...PARAM_CAST, json: 'json' };

function columnValue(c: ColumnInfo, row: DocData): unknown {
  const v = row[c.name];
  if (v === undefined || v === null) return null;
  return c.kind === 'json' && typeof v !== 'string' ? JSON.stringify(v) : v;
}

/** `INSERT … SELECT * FROM unnest(<one array per column>)`: the same text for any number of rows. */
function logInsert(meta: Meta, rows: readonly DocData[], values: unknown[]): string {
  const params = meta.columns.map((c) => {
    values.push(rows.map((r) => columnValue(c, r)));
    return `$${values.length}::${ARRAY_TYPE[c.kind]}[]`;
  });
  return `INSERT INTO ${meta.table} (${meta.columns.map((c) => c.sql).join(', ')}) SELECT * FROM unnest(${params.join(', ')})
    ON CONFLICT ("name") DO NOTHING RETURNING "name"`;
}

function disableUpdate(meta: Meta, names: readonly string[], values: unknown[]): string {
  const enabled = meta.column('enabled');
  if (!enabled) throw new Error(`${meta.name} has no column enabled`);
  values.push(names);
  return `UPDATE ${meta.table} SET ${enabled.sql} = 0 WHERE "name" = ANY($${values.length}::text[])`;
}

export interface Recorded {
  /** How many events took their new state (the others had been taken again by another process after their lease ran out). */
  updated: number;
}

/**
 * Writes a batch: log rows, events' states and disabled webhooks in one statement. A log row whose
 * random name is already taken (a hash name collision) is inserted again under a new name.
 */
export async function recordBatch(q: Queryable, tenants: readonly TenantBookkeeping[], outcomes: readonly EventOutcome[]): Promise<Recorded> {
  const values: unknown[] = [];
  const ctes: string[] = [];
  const selects: string[] = [];
  tenants.forEach((t, i) => {
    const names = new Set<string>();
    for (const r of t.rows) {
      while (names.has(String(r.name))) r.name = hashName();
      names.add(String(r.name));
    }
    if (t.rows.length > 0) {
      ctes.push(`log${i} AS (${logInsert(t.log, t.rows, values)})`);
      selects.push(`(SELECT array_agg("name") FROM log${i}) AS "log${i}"`);
    }
    if (t.disable.length > 0) ctes.push(`off${i} AS (${disableUpdate(t.webhook, t.disable, values)})`);
  });
  if (outcomes.length > 0) {
    const first = values.length + 1;
    values.push(...outcomesParams(outcomes));
    ctes.push(`events AS (${outcomesUpdate(first)})`);
    selects.push(`(SELECT count(*) FROM events)::int AS "updated"`);
  }
  if (ctes.length === 0) return { updated: 0 };
  const text = `WITH ${ctes.join(',\n')}\nSELECT ${selects.join(', ') || 'NULL'}`;
  // One tenant without a 410 (the usual batch): a text that repeats, worth a prepared statement.
  const repeats = tenants.length <= 1 && tenants.every((t) => t.disable.length === 0);
  const { rows } = await q.query<Record<string, unknown>>(text, values, { prepare: repeats });
  const result = rows[0] ?? {};
  for (const [i, t] of tenants.entries()) {
    if (t.rows.length === 0) continue;
    const stored = new Set((result[`log${i}`] as string[] | null) ?? []);
    await insertRenamed(
      q,
      t.log,
      t.rows.filter((r) => !stored.has(String(r.name))),
    );
  }
  return { updated: Number(result.updated ?? 0) };
}

/** Rows whose name was taken: new names until they are in (a collision of 10 random base32 characters is rare). */
async function insertRenamed(q: Queryable, meta: Meta, rows: DocData[]): Promise<void> {
  for (let tries = 0; rows.length > 0; tries++) {
    if (tries === 5) throw new Error(`could not name ${rows.length} ${meta.name} rows`);
    for (const r of rows) r.name = hashName();
    const values: unknown[] = [];
    const { rows: stored } = await q.query<{ name: string }>(logInsert(meta, rows, values), values);
    const names = new Set(stored.map((s) => s.name));
    rows = rows.filter((r) => !names.has(String(r.name)));
  }
}
