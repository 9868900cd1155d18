import { inputKindOf, isLayout } from '../meta/fieldtypes';
import type { DocField, DocTypeMeta, DocValues } from '../meta/types';

/**
 * Moving values between the API's formats and the browser's inputs, and building the body of a
 * save: only what the user may write, child rows without their bookkeeping.
 */

/** `2025-06-01 10:20:30.000000` <-> `2025-06-01T10:20:30` (datetime-local). */
export function toDatetimeInput(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value.replace(' ', 'T').slice(0, 19) : '';
}

export function fromDatetimeInput(value: string): string | null {
  if (value === '') return null;
  const [date, time = '00:00'] = value.split('T');
  return `${date ?? ''} ${time.length === 5 ? `${time}:00` : time}`;
}

export function toTimeInput(value: unknown): string {
  return typeof value === 'string' ? value.slice(0, 8) : '';
}

export function fromNumberInput(value: string, integer: boolean): number | null {
  if (value.trim() === '') return null;
  const n = Number(value);
  if (!Number.isFinite(n)) return null;
  return integer ? Math.trunc(n) : n;
}

/** Text shown for a value in a text-like input. */
export function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value, null, 2);
}

/** Defaults Frappe's form fills in before the first save; dynamic ones (Today, __user) are the server's. */
export function newDocValues(meta: DocTypeMeta): DocValues {
  const doc: DocValues = { docstatus: 0 };
  for (const field of meta.fields) {
    const raw = field.default;
    if (raw === undefined || raw === null || raw === '' || isLayout(field)) continue;
    if (/^(today|now|__user)$/i.test(raw)) continue;
    const kind = inputKindOf(field);
    doc[field.fieldname] = kind === 'check' || kind === 'int' || kind === 'float' ? Number(raw) : raw;
  }
  return doc;
}

const ROW_BOOKKEEPING = new Set(['owner', 'creation', 'modified', 'modified_by', 'parent', 'parentfield', 'parenttype', 'docstatus', 'doctype']);

/** A field the user may change on this form. */
export function isEditable(meta: DocTypeMeta, field: DocField, docstatus: number, isNew: boolean): boolean {
  const rights = meta.__perm.rights;
  if (!(isNew ? rights.create : rights.write)) return false;
  if (field.read_only === 1 || inputKindOf(field) === 'readonly') return false;
  if (!meta.__perm.write_levels.includes(field.permlevel ?? 0)) return false;
  if (docstatus === 2) return false;
  if (docstatus === 1) return field.allow_on_submit === 1;
  return true;
}

/** The body of a save: the fields the user may write, Table rows with their names (kept rows) and values. */
export function saveBody(meta: DocTypeMeta, doc: DocValues, isNew: boolean): DocValues {
  const docstatus = Number(doc.docstatus ?? 0);
  const body: DocValues = {};
  for (const field of meta.fields) {
    if (isLayout(field) || !isEditable(meta, field, docstatus, isNew)) continue;
    if (!(field.fieldname in doc)) continue;
    const value = doc[field.fieldname];
    body[field.fieldname] = Array.isArray(value)
      ? value.map((row: DocValues, i) => ({
          ...Object.fromEntries(Object.entries(row).filter(([k]) => !ROW_BOOKKEEPING.has(k) && !k.startsWith('__'))),
          idx: i + 1,
        }))
      : value;
  }
  if (!isNew) body.modified = doc.modified;
  if (isNew && typeof doc.amended_from === 'string') body.amended_from = doc.amended_from;
  if (isNew && typeof doc.name === 'string' && doc.name !== '') body.name = doc.name;
  return body;
}

/** Frappe's amend: a new draft copying the cancelled document, pointing back at it. */
export function amendedCopy(meta: DocTypeMeta, doc: DocValues): DocValues {
  const copy: DocValues = { docstatus: 0, amended_from: doc.name };
  for (const field of meta.fields) {
    if (isLayout(field) || field.fieldname === 'amended_from' || !(field.fieldname in doc)) continue;
    const value = doc[field.fieldname];
    copy[field.fieldname] = Array.isArray(value)
      ? value.map((row: DocValues) => Object.fromEntries(Object.entries(row).filter(([k]) => k !== 'name' && !ROW_BOOKKEEPING.has(k))))
      : value;
  }
  return copy;
}

/** Labels of mandatory fields left empty (Frappe checks these in the browser before saving). */
export function missingMandatory(meta: DocTypeMeta, doc: DocValues, label: (f: DocField) => string): string[] {
  return meta.fields
    .filter((f) => f.reqd === 1 && !isLayout(f) && f.hidden !== 1)
    .filter((f) => {
      const v = doc[f.fieldname];
      return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
    })
    .map(label);
}
