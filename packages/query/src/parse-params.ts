import { DataError } from '@quire/errors';
import { decodeJsonArg, isPlainObject, parseBoolean } from '@quire/frappe-compat';
import { illegalQuery, invalidParam, shown } from './errors';
import type { FilterSpec, ListParams, ListRequest } from './types';

/**
 * The edge of the list query language: raw list parameters (text from a query string or form, or
 * JSON values from a body) decoded and checked once into a typed ListRequest. No metadata involved;
 * the compiler resolves names against the DocType.
 */

export function parseListRequest(params: ListParams): ListRequest {
  return {
    fields: parseFieldsParam(params.fields),
    filters: parseFilterParam('filters', params.filters),
    orFilters: parseFilterParam('or_filters', params.or_filters),
    orderBy: parseSortParam(params.order_by),
    groupBy: parseSortParam(params.group_by),
    ...parsePaging(params),
    asDict: parseAsDict(params.as_dict),
  };
}

const isBlank = (v: unknown): boolean => v === undefined || v === null || v === '';

// ---------------------------------------------------------------------------------------------
// fields

/** The `fields` entries (still unparsed expressions); default `["name"]`. */
export function parseFieldsParam(value: unknown): string[] {
  if (isBlank(value)) return ['name'];
  if (typeof value === 'string' && value.trim() === '*') return ['*'];
  const decoded = decodeJsonArg('fields', value);
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

function badFilter(param: string, what: unknown): never {
  throw invalidParam(`Invalid filter in ${param}: ${shown(what)}`);
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
  const decoded = decodeJsonArg(param, value);
  if (decoded === null) return [];
  if (Array.isArray(decoded)) return fromList(param, decoded);
  if (isPlainObject(decoded)) return Object.entries(decoded).map(([field, v]) => fromDictEntry(param, field, v));
  return badFilter(param, decoded);
}

// ---------------------------------------------------------------------------------------------
// order_by / group_by

/** A comma list of sort items (their grammar is checked against the DocType by the compiler). */
export function parseSortParam(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw illegalQuery();
  if (value.trim() === '') return undefined;
  return value.split(',').map((s) => s.trim());
}

// ---------------------------------------------------------------------------------------------
// as_dict, limits

/** Frappe's sbool: "true"/"1"/true → true, "false"/"0"/false → false; blank → true. */
export function parseAsDict(value: unknown): boolean {
  if (isBlank(value)) return true;
  const parsed = parseBoolean(value);
  if (parsed === undefined) throw invalidParam(`as_dict must be true or false, got ${shown(value)}`);
  return parsed;
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
  /** Rows asked for; 0 means all (the server's cap applies when compiling). */
  pageLength: number;
}

export const DEFAULT_PAGE_LENGTH = 20;

export function parsePaging(params: Pick<ListParams, 'limit' | 'limit_page_length' | 'limit_start'>): Paging {
  const start = isBlank(params.limit_start) ? 0 : nonNegativeInteger('limit_start', params.limit_start);
  let pageLength = DEFAULT_PAGE_LENGTH;
  if (!isBlank(params.limit)) pageLength = nonNegativeInteger('limit', params.limit);
  else if (!isBlank(params.limit_page_length)) pageLength = nonNegativeInteger('limit_page_length', params.limit_page_length);
  return { start, pageLength };
}

/** The page length a statement uses: 0 ("all") and anything above the server's cap become the cap. */
export function cappedPageLength(requested: number, maxPageLength: number): number {
  return requested === 0 || requested > maxPageLength ? maxPageLength : requested;
}
