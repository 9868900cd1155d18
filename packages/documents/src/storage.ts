import { PG, pgErrorInfo, qualified, type Queryable, type Transaction } from '@quire/db';
import { DuplicateEntryError, UniqueValidationError, ValidationError } from '@quire/errors';
import { cstr } from '@quire/frappe-compat';
import { fieldLabel, type Meta, type TenantMeta } from '@quire/meta';
import type { DocData } from './context';

/**
 * Row I/O for documents: the only place that writes SQL for a document's own table, its child
 * tables and Singles. Column lists come from metadata and are built once per Meta.
 */

const selectLists = new WeakMap<Meta, string>();

function selectList(meta: Meta): string {
  let list = selectLists.get(meta);
  if (list === undefined) {
    list = meta.columns.map((c) => c.sql).join(', ');
    selectLists.set(meta, list);
  }
  return list;
}

/**
 * A document row by name, and the same FOR UPDATE: one string per Meta, so the prepared-statement
 * lookup keyed by the SQL text hashes an already-hashed string instead of a fresh one per read.
 */
const rowSelects = new WeakMap<Meta, { plain: string; forUpdate: string }>();

function rowSelect(meta: Meta, forUpdate: boolean): string {
  let texts = rowSelects.get(meta);
  if (texts === undefined) {
    const plain = `SELECT ${selectList(meta)} FROM ${meta.table} WHERE "name" = $1`;
    texts = { plain, forUpdate: `${plain} FOR UPDATE` };
    rowSelects.set(meta, texts);
  }
  return forUpdate ? texts.forUpdate : texts.plain;
}

/** The name as the table stores it: autoincrement names are integers, anything else is not found. */
export function storedName(meta: Meta, name: unknown): string | number | undefined {
  if (meta.namingRule === 'autoincrement') {
    const n = typeof name === 'number' ? name : typeof name === 'string' && /^\d{1,15}$/.test(name.trim()) ? Number(name) : NaN;
    return Number.isSafeInteger(n) ? n : undefined;
  }
  if (typeof name === 'string') return name.includes('\0') ? undefined : name;
  return typeof name === 'number' ? String(name) : undefined;
}

export async function selectRow(q: Queryable, meta: Meta, name: string | number, forUpdate = false): Promise<DocData | undefined> {
  const { rows } = await q.query<DocData>(rowSelect(meta, forUpdate), [name], {
    prepare: true,
  });
  return rows[0];
}

export async function selectChildren(q: Queryable, parent: Meta, child: Meta, parentfield: string, parentName: string | number): Promise<DocData[]> {
  const { rows } = await q.query<DocData>(
    `SELECT ${selectList(child)} FROM ${child.table} WHERE "parent" = $1 AND "parenttype" = $2 AND "parentfield" = $3 ORDER BY "idx"`,
    [String(parentName), parent.name, parentfield],
    { prepare: true },
  );
  for (const r of rows) r.doctype = child.name;
  return rows;
}

/** A whole document: the row and every child table, or undefined. */
export async function selectDoc(q: Queryable, tenant: TenantMeta, meta: Meta, name: string | number, forUpdate = false): Promise<DocData | undefined> {
  if (meta.issingle) return selectSingle(q, tenant, meta);
  const row = await selectRow(q, meta, name, forUpdate);
  if (!row) return undefined;
  row.doctype = meta.name;
  for (const f of meta.tableFields) {
    const child = tenant.require(f.options ?? '');
    row[f.fieldname] = await selectChildren(q, meta, child, f.fieldname, row.name as string | number);
  }
  return row;
}

function columnValues(meta: Meta, row: DocData): unknown[] {
  return meta.columns.map((c) => {
    const v = row[c.name];
    return v === undefined ? null : v;
  });
}

/** One row's INSERT and its UPDATE by name, per Meta: a write reuses the same text (and prepared statement). */
const rowWrites = new WeakMap<Meta, { insert: string; update: string; updated: Meta['columns'] }>();

function rowWrite(meta: Meta): { insert: string; update: string; updated: Meta['columns'] } {
  let texts = rowWrites.get(meta);
  if (texts === undefined) {
    const updated = meta.columns.filter((c) => c.name !== 'name');
    texts = {
      insert: `INSERT INTO ${meta.table} (${selectList(meta)}) VALUES (${meta.columns.map((c, j) => `$${j + 1}${castOf(c.kind)}`).join(', ')})`,
      update: `UPDATE ${meta.table} SET ${updated.map((c, i) => `${c.sql} = $${i + 1}${castOf(c.kind)}`).join(', ')} WHERE "name" = $${updated.length + 1}`,
      updated,
    };
    rowWrites.set(meta, texts);
  }
  return texts;
}

export async function insertRows(q: Queryable, meta: Meta, rows: DocData[]): Promise<void> {
  if (rows.length === 0) return;
  if (rows.length === 1) {
    const [row] = rows as [DocData];
    try {
      await q.query(rowWrite(meta).insert, columnValues(meta, row), { prepare: true });
    } catch (e) {
      throw mapWriteError(e, meta, row);
    }
    return;
  }
  const width = meta.columns.length;
  const values: unknown[] = [];
  const tuples = rows.map((row, i) => {
    values.push(...columnValues(meta, row));
    return `(${meta.columns.map((c, j) => `$${i * width + j + 1}${castOf(c.kind)}`).join(', ')})`;
  });
  try {
    await q.query(`INSERT INTO ${meta.table} (${selectList(meta)}) VALUES ${tuples.join(', ')}`, values);
  } catch (e) {
    throw mapWriteError(e, meta, undefined);
  }
}

export async function updateRow(q: Queryable, meta: Meta, row: DocData): Promise<void> {
  try {
    await q.query(rowWrite(meta).update, updateValues(meta, row), { prepare: true });
  } catch (e) {
    throw mapWriteError(e, meta, row);
  }
}

function updateValues(meta: Meta, row: DocData): unknown[] {
  const values = rowWrite(meta).updated.map((c) => (row[c.name] === undefined ? null : row[c.name]));
  values.push(row.name);
  return values;
}

/**
 * A new row, written with the transaction's next statement or its commit (Transaction.defer): the
 * lifecycle's last writes, which nothing reads back before commit. A duplicate name still fails as
 * DuplicateEntryError, from the statement that sends it.
 */
export function deferInsert(tx: Transaction, meta: Meta, row: DocData): void {
  tx.defer({
    text: rowWrite(meta).insert,
    values: columnValues(meta, row),
    table: meta.tableName,
    row: `${meta.table} ${String(row.name)}`,
    mapError: (e) => mapWriteError(e, meta, row),
  });
}

/** A row's new values, deferred as deferInsert is. */
export function deferUpdate(tx: Transaction, meta: Meta, row: DocData): void {
  tx.defer({
    text: rowWrite(meta).update,
    values: updateValues(meta, row),
    table: meta.tableName,
    row: `${meta.table} ${String(row.name)}`,
    mapError: (e) => mapWriteError(e, meta, row),
  });
}

/**
 * Frappe's `frappe.db.set_value`: sets columns of one stored row directly, without the lifecycle
 * (no validation, hooks, permission checks or `modified` bump unless given). Only for the platform's
 * own trusted bookkeeping — a user's API key, their last login, a webhook its receiver retired —
 * never for request input. Columns must be the DocType's; returns whether the row exists.
 */
export async function setValues(q: Queryable, meta: Meta, name: string | number, values: Readonly<Record<string, unknown>>): Promise<boolean> {
  const entries = Object.entries(values);
  const columns = entries.map(([fieldname]) => {
    const column = meta.column(fieldname);
    if (!column || column.name === 'name') throw new Error(`setValues: ${meta.name} has no column ${fieldname}`);
    return column;
  });
  const { rowCount } = await q.query(
    `UPDATE ${meta.table} SET ${columns.map((c, i) => `${c.sql} = $${i + 1}${castOf(c.kind)}`).join(', ')} WHERE "name" = $${columns.length + 1}`,
    [...entries.map(([, v]) => (v === undefined ? null : v)), name],
  );
  return rowCount > 0;
}

export async function deleteRow(q: Queryable, meta: Meta, name: string | number): Promise<void> {
  await q.query(`DELETE FROM ${meta.table} WHERE "name" = $1`, [name], { prepare: true });
}

/** Deletes a parent's rows of one Table field, except those named in `keep`. */
export async function deleteChildren(
  q: Queryable,
  parent: Meta,
  child: Meta,
  parentfield: string,
  parentName: string | number,
  keep: string[] = [],
): Promise<void> {
  await q.query(
    `DELETE FROM ${child.table} WHERE "parent" = $1 AND "parenttype" = $2 AND "parentfield" = $3 AND NOT ("name" = ANY($4::text[]))`,
    [String(parentName), parent.name, parentfield, keep],
    { prepare: true },
  );
}

/** Explicit casts keep parameter types stable for prepared statements and PGlite alike. */
function castOf(kind: string): string {
  switch (kind) {
    case 'datetime':
      return '::timestamp';
    case 'date':
      return '::date';
    case 'time':
      return '::time';
    case 'json':
      return '::json';
    default:
      return '';
  }
}

// ---- Singles: one row per (doctype, field) in tabSingles, values as text ----

function singlesTable(meta: Meta): string {
  return qualified(meta.schema, 'tabSingles');
}

export async function selectSingle(q: Queryable, tenant: TenantMeta, meta: Meta): Promise<DocData> {
  const { rows } = await q.query<{ field: string; value: string | null }>(`SELECT "field", "value" FROM ${singlesTable(meta)} WHERE "doctype" = $1`, [
    meta.name,
  ]);
  const stored = new Map(rows.map((r) => [r.field, r.value]));
  const doc: DocData = { name: meta.name, owner: stored.get('owner') ?? 'Administrator', docstatus: 0, idx: 0 };
  for (const key of ['creation', 'modified', 'modified_by'] as const) doc[key] = stored.get(key) ?? null;
  // Fields never stored stay undefined: the lifecycle fills them with the field defaults.
  for (const c of meta.columns) {
    if (!c.field || !stored.has(c.name)) continue;
    const raw = stored.get(c.name);
    doc[c.name] = raw === undefined || raw === null ? defaultForKind(c.kind) : fromText(c.kind, raw);
  }
  doc.doctype = meta.name;
  for (const f of meta.tableFields) {
    doc[f.fieldname] = await selectChildren(q, meta, tenant.require(f.options ?? ''), f.fieldname, meta.name);
  }
  return doc;
}

function defaultForKind(kind: string): unknown {
  return kind === 'int' || kind === 'float' || kind === 'check' ? 0 : null;
}

function fromText(kind: string, text: string): unknown {
  if (kind === 'int' || kind === 'float' || kind === 'check') {
    const n = Number(text);
    return Number.isFinite(n) ? n : 0;
  }
  return text;
}

export async function writeSingle(q: Queryable, meta: Meta, doc: DocData): Promise<void> {
  const entries: Array<[string, string | null]> = [];
  for (const key of ['owner', 'creation', 'modified', 'modified_by'] as const) entries.push([key, doc[key] == null ? null : cstr(doc[key])]);
  for (const c of meta.columns) {
    if (!c.field) continue;
    const v = doc[c.name];
    entries.push([c.name, v === undefined || v === null ? null : cstr(v)]);
  }
  await q.query(
    `INSERT INTO ${singlesTable(meta)} ("doctype", "field", "value")
     SELECT $1, f, v FROM unnest($2::text[], $3::text[]) AS u(f, v)
     ON CONFLICT ("doctype", "field") DO UPDATE SET "value" = EXCLUDED."value"`,
    [meta.name, entries.map((e) => e[0]), entries.map((e) => e[1])],
  );
}

export async function deleteSingle(q: Queryable, meta: Meta): Promise<void> {
  await q.query(`DELETE FROM ${singlesTable(meta)} WHERE "doctype" = $1`, [meta.name]);
}

/** Turns constraint violations into Frappe's errors; anything else is rethrown untouched. */
export function mapWriteError(e: unknown, meta: Meta, row: DocData | undefined): unknown {
  const info = pgErrorInfo(e);
  if (!info) return e;
  if (info.code === PG.uniqueViolation) {
    if (info.constraint?.endsWith('_pkey')) {
      const name = row?.name ?? '';
      return new DuplicateEntryError(`${meta.name} ${cstr(name)} already exists`, { title: 'Duplicate Name', cause: e });
    }
    const field = meta.dataFields.find((f) => meta.uniqueIndexName(f.fieldname) === info.constraint);
    const label = field ? fieldLabel(field) : 'Value';
    return new UniqueValidationError(`${label} must be unique`, { title: 'Unique Value', cause: e });
  }
  if (info.code === PG.stringDataRightTruncation || info.code === PG.numericValueOutOfRange) {
    return new ValidationError(`A value of ${meta.name} does not fit its field`, { title: 'Invalid Value', cause: e });
  }
  return e;
}
