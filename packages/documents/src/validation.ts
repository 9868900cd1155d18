import { type Queryable } from '@quire/db';
import {
  CancelledLinkError,
  CannotChangeConstantError,
  LinkExistsError,
  LinkValidationError,
  MandatoryError,
  UpdateAfterSubmitError,
  ValidationError,
  type ServerMessage,
} from '@quire/errors';
import { cstr } from '@quire/frappe-compat';
import { checkFieldValue, fieldLabel, fieldTypeSpec, type DocField, type Meta, type TenantMeta } from '@quire/meta';
import type { DocData } from './context';
import { storedName } from './storage';

/** Save-time checks of Document._validate (frappe-wire.md §4.5), on a document and its rows. */

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);
}

function rowsOf(meta: Meta, doc: DocData): Array<{ field: DocField; rows: DocData[] }> {
  return meta.tableFields.map((field) => ({ field, rows: (doc[field.fieldname] as DocData[] | undefined) ?? [] }));
}

/** Length, Select options, Email/Phone/URL, non-negative: on the document and every row. */
export function checkValues(meta: Meta, tenant: TenantMeta, doc: DocData): void {
  for (const f of meta.dataFields) checkFieldValue(f, doc[f.fieldname], meta.name);
  for (const { field, rows } of rowsOf(meta, doc)) {
    const child = tenant.require(field.options ?? '');
    for (const row of rows) for (const f of child.dataFields) checkFieldValue(f, row[f.fieldname], child.name);
  }
}

/** MandatoryError listing every missing field, with Frappe's messages. */
export function checkMandatory(meta: Meta, tenant: TenantMeta, doc: DocData): void {
  const messages: ServerMessage[] = [];
  const missing: string[] = [];
  for (const f of meta.fields) {
    if (!f.reqd) continue;
    const kind = fieldTypeSpec(f.fieldtype).kind;
    if (kind === 'none') continue;
    if (isEmpty(doc[f.fieldname])) {
      missing.push(f.fieldname);
      messages.push({
        message: kind === 'table' ? `Error: Data missing in table ${fieldLabel(f)}` : `Error: Value missing for ${meta.name}: ${fieldLabel(f)}`,
        title: 'Missing Fields',
        indicator: 'red',
        raise_exception: 1,
      });
    }
  }
  for (const { field, rows } of rowsOf(meta, doc)) {
    const child = tenant.require(field.options ?? '');
    for (const row of rows) {
      for (const f of child.dataFields) {
        if (f.reqd && isEmpty(row[f.fieldname])) {
          missing.push(`${field.fieldname}[${String(row.idx)}].${f.fieldname}`);
          messages.push({
            message: `Error: ${child.name} Row #${String(row.idx)}: Value missing for: ${fieldLabel(f)}`,
            title: 'Missing Fields',
            indicator: 'red',
            raise_exception: 1,
          });
        }
      }
    }
  }
  if (missing.length > 0) {
    throw new MandatoryError(`[${meta.name}, ${cstr(doc.name)}]: ${missing.join(', ')}`, { messages, silent: true });
  }
}

interface LinkRef {
  target: Meta;
  value: unknown;
  label: string;
  row?: number;
  /** amended_from may point at a cancelled document. */
  allowCancelled: boolean;
}

function linkRefs(meta: Meta, tenant: TenantMeta, doc: DocData, row?: number): LinkRef[] {
  const refs: LinkRef[] = [];
  for (const f of meta.dataFields) {
    const value = doc[f.fieldname];
    if (isEmpty(value)) continue;
    let targetName: string | undefined;
    if (f.fieldtype === 'Link') targetName = f.options;
    else if (f.fieldtype === 'Dynamic Link') {
      const dt = doc[f.options ?? ''];
      if (isEmpty(dt)) continue;
      targetName = String(dt);
      if (!tenant.get(targetName)) {
        throw new LinkValidationError(`Could not find ${fieldLabel(f)}: ${String(value)} (no DocType ${targetName})`, { title: 'Invalid Link' });
      }
    } else continue;
    const target = targetName ? tenant.get(targetName) : undefined;
    if (!target) continue;
    const ref: LinkRef = { target, value, label: fieldLabel(f), allowCancelled: f.fieldname === 'amended_from' };
    if (row !== undefined) ref.row = row;
    refs.push(ref);
  }
  return refs;
}

/** Every Link (and Dynamic Link) value must name an existing, not cancelled, document. */
export async function checkLinks(q: Queryable, meta: Meta, tenant: TenantMeta, doc: DocData): Promise<void> {
  const refs = linkRefs(meta, tenant, doc);
  for (const { field, rows } of rowsOf(meta, doc)) {
    const child = tenant.require(field.options ?? '');
    for (const row of rows) refs.push(...linkRefs(child, tenant, row, Number(row.idx)));
  }
  for (const ref of refs) {
    const prefix = ref.row !== undefined ? `Row #${ref.row}: ` : '';
    if (ref.target.issingle) {
      if (String(ref.value) !== ref.target.name)
        throw new LinkValidationError(`${prefix}Could not find ${ref.label}: ${String(ref.value)}`, { title: 'Invalid Link' });
      continue;
    }
    const name = storedName(ref.target, String(ref.value));
    const found =
      name === undefined
        ? undefined
        : (await q.query<{ docstatus: number }>(`SELECT "docstatus" FROM ${ref.target.table} WHERE "name" = $1`, [name], { prepare: true })).rows[0];
    if (!found) throw new LinkValidationError(`${prefix}Could not find ${ref.label}: ${String(ref.value)}`, { title: 'Invalid Link' });
    if (found.docstatus === 2 && ref.target.isSubmittable && !ref.allowCancelled) {
      throw new CancelledLinkError(`${prefix}Cannot link cancelled document: ${ref.target.name} ${String(ref.value)}`, { title: 'Cancelled Document' });
    }
  }
}

function same(a: unknown, b: unknown): boolean {
  if ((a === null || a === undefined || a === '') && (b === null || b === undefined || b === '')) return true;
  return a === b || String(a) === String(b);
}

/** After submit only allow_on_submit fields may change (rows too; rows cannot be added or removed). */
export function checkUpdateAfterSubmit(meta: Meta, tenant: TenantMeta, previous: DocData, doc: DocData): void {
  const refuse = (label: string, before: unknown, after: unknown, row?: number): never => {
    const prefix = row !== undefined ? `Row #${row}: ` : '';
    throw new UpdateAfterSubmitError(`${prefix}Not allowed to change ${label} after submission from ${cstr(before)} to ${cstr(after)}`, {
      title: 'Cannot Update After Submit',
    });
  };
  for (const f of meta.dataFields) {
    if (!f.allow_on_submit && !same(previous[f.fieldname], doc[f.fieldname])) refuse(fieldLabel(f), previous[f.fieldname], doc[f.fieldname]);
  }
  for (const f of meta.tableFields) {
    const child = tenant.require(f.options ?? '');
    const before = (previous[f.fieldname] as DocData[] | undefined) ?? [];
    const after = (doc[f.fieldname] as DocData[] | undefined) ?? [];
    if (f.allow_on_submit) continue;
    if (before.length !== after.length || before.some((r, i) => String(r.name) !== String(after[i]?.name))) {
      refuse(fieldLabel(f), `${before.length} rows`, `${after.length} rows`);
    }
    after.forEach((row, i) => {
      for (const cf of child.dataFields) {
        if (!cf.allow_on_submit && !same(before[i]?.[cf.fieldname], row[cf.fieldname]))
          refuse(fieldLabel(cf), before[i]?.[cf.fieldname], row[cf.fieldname], i + 1);
      }
    });
  }
}

/** set_only_once fields keep the first value they were saved with. */
export function checkSetOnlyOnce(meta: Meta, previous: DocData, doc: DocData): void {
  for (const f of meta.dataFields) {
    if (!f.set_only_once) continue;
    if (!isEmpty(previous[f.fieldname]) && !same(previous[f.fieldname], doc[f.fieldname])) {
      throw new CannotChangeConstantError(`Value cannot be changed for ${fieldLabel(f)}`, { title: 'Cannot Change' });
    }
  }
}

/**
 * Documents that link to `meta`/`name` and block deleting it (any linking document that is not
 * cancelled) or cancelling it (submitted linking documents).
 */
export async function checkNoLinks(q: Queryable, tenant: TenantMeta, meta: Meta, name: string | number, action: 'delete' | 'cancel'): Promise<void> {
  const parts: string[] = [];
  const values: unknown[] = [String(name)];
  for (const other of tenant.all()) {
    if (other.issingle) continue;
    for (const f of other.dataFields) {
      if (f.fieldtype !== 'Link' || f.options !== meta.name) continue;
      const col = other.column(f.fieldname)?.sql;
      if (!col) continue;
      const docstatus = action === 'delete' ? `"docstatus" <> 2` : `"docstatus" = 1`;
      const self = other.name === meta.name ? ` AND "name"::text <> $1` : '';
      if (other.istable) {
        // a row of the document itself does not count
        values.push(meta.name);
        parts.push(
          `(SELECT "parenttype"::text AS dt, "parent"::text AS dn FROM ${other.table} WHERE ${col} = $1 AND ${docstatus} AND NOT ("parenttype" = $${values.length} AND "parent" = $1) LIMIT 1)`,
        );
      } else {
        values.push(other.name);
        parts.push(`(SELECT $${values.length}::text AS dt, "name"::text AS dn FROM ${other.table} WHERE ${col} = $1 AND ${docstatus}${self} LIMIT 1)`);
      }
    }
  }
  if (parts.length === 0) return;
  const { rows } = await q.query<{ dt: string; dn: string }>(`SELECT dt, dn FROM (${parts.join(' UNION ALL ')}) AS links LIMIT 1`, values);
  const hit = rows[0];
  if (hit) {
    throw new LinkExistsError(`Cannot delete or cancel because ${meta.name} ${String(name)} is linked with ${hit.dt} ${hit.dn}`, {
      title: 'Linked Document',
    });
  }
}

export function refuseCancelledEdit(): never {
  throw new ValidationError('Cannot edit cancelled document', { title: 'Cancelled Document' });
}
