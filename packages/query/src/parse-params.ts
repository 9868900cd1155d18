import { DataError } from '@quire/errors';
import { invalidJson, invalidParam, shown } from './errors';
import type { ListParams } from './types';

/** Decoding of the raw list parameters into plain shapes; no metadata involved. */

const isBlank = (v: unknown): boolean => v === undefined || v === null || v === '';

/** A JSON string is decoded; an already-parsed value is returned as is. */
export function decodeJson(param: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw invalidJson(param);
  }
}

// ---------------------------------------------------------------------------------------------
// fields

/** The `fields` entries (still unparsed expressions); default `["name"]`. */
export function parseFieldsParam(value: unknown): string[] {
  if (isBlank(value)) return ['name'];
  if (typeof value === 'string' && value.trim() === '*') return ['*'];
  const decoded = decodeJson('fields', value);
  if (isBlank(decoded)) return ['name'];
  const entries = typeof decoded === 'string' ? [decoded] : decoded;
  if (!Array.isArray(entries)) throw new DataError(`fields must be a list of strings, got ${shown(decoded)}`);
  for (const entry of entries) {
    if (typeof entry !== 'string') throw new DataError(`fields must be a list of strings, got ${shown(entry)}`);
  }
  return entries.length === 0 ? ['name'] : (entries as string[]);
}

// ---------------------------------------------------------------------------------------------
// filters / or_filters

/** One filter as the client wrote it: `doctype` only for the 4-element form. */
export interface FilterSpec {
  doctype?: string;
  field: string;
  operator: string;
  value: unknown;
}

function badFilter(param: string, what: unknown): never {
  throw invalidParam(`Invalid filter in ${param}: ${shown(what)}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `{field: value}` or `{field: [operator, value]}`. */
function fromDictEntry(param: string, field: string, value: unknown): FilterSpec {
  if (Array.isArray(value)) {
    const [operator, operand] = value as unknown[];
    if (value.length !== 2 || typeof operator !== 'string') badFilter(param, { [field]: value });
    return { field, operator, value: operand };
  }
  if (isPlainObject(value)) badFilter(param, { [field]: value });
  return { field, operator: '=', value };
}

/** `[field, value]`, `[field, op, value]` or `[doctype, field, op, value]`. */
function fromTuple(param: string, tuple: readonly unknown[]): FilterSpec {
  const strings = (...xs: unknown[]): boolean => xs.every((x) => typeof x === 'string');
  if (tuple.length === 2) {
    const [field, value] = tuple;
    if (!strings(field)) badFilter(param, tuple);
    return { field: field as string, operator: '=', value };
  }
  if (tuple.length === 3) {
    const [field, operator, value] = tuple;
    if (!strings(field, operator)) badFilter(param, tuple);
    return { field: field as string, operator: operator as string, value };
  }
  if (tuple.length === 4) {
    const [doctype, field, operator, value] = tuple;
    if (!strings(doctype, field, operator)) badFilter(param, tuple);
    return { doctype: doctype as string, field: field as string, operator: operator as string, value };
  }
  return badFilter(param, tuple);
}

function fromList(param: string, list: readonly unknown[]): FilterSpec[] {
  if (list.length === 0) return [];
  if (typeof list[0] === 'string') return [fromTuple(param, list)];
  return list.map((item) => (Array.isArray(item) ? fromTuple(param, item) : badFilter(param, item)));
}

/** `filters` / `or_filters` in any accepted shape; blank, `[]` and `{}` mean no condition. */
export function parseFilterParam(param: 'filters' | 'or_filters', value: unknown): FilterSpec[] {
  if (isBlank(value)) return [];
  const decoded = decodeJson(param, value);
  if (decoded === null) return [];
  if (Array.isArray(decoded)) return fromList(param, decoded);
  if (isPlainObject(decoded)) return Object.entries(decoded).map(([field, v]) => fromDictEntry(param, field, v));
  return badFilter(param, decoded);
}

// ---------------------------------------------------------------------------------------------
// as_dict, limits

/** Frappe's sbool: "true"/"1"/true → true, "false"/"0"/false → false; blank → true. */
export function parseAsDict(value: unknown): boolean {
  if (isBlank(value)) return true;
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  if (typeof value === 'string') {
    const s = value.trim().toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
  }
  throw invalidParam(`as_dict must be true or false, got ${shown(value)}`);
}

function nonNegativeInteger(param: string, value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) {
    const n = Number(value.trim());
    if (Number.isSafeInteger(n)) return n;
  }
  throw invalidParam(`${param} must be a non-negative integer, got ${shown(value)}`);
}

export interface Paging {
  start: number;
  /** Always finite: 0 ("all") and anything above the server cap become the cap. */
  pageLength: number;
}

export const DEFAULT_PAGE_LENGTH = 20;

export function parsePaging(params: Pick<ListParams, 'limit' | 'limit_page_length' | 'limit_start'>, maxPageLength: number): Paging {
  const start = isBlank(params.limit_start) ? 0 : nonNegativeInteger('limit_start', params.limit_start);
  let requested = DEFAULT_PAGE_LENGTH;
  if (!isBlank(params.limit)) requested = nonNegativeInteger('limit', params.limit);
  else if (!isBlank(params.limit_page_length)) requested = nonNegativeInteger('limit_page_length', params.limit_page_length);
  const pageLength = requested === 0 || requested > maxPageLength ? maxPageLength : requested;
  return { start, pageLength };
}
