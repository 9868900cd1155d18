import { CharacterLengthExceededError, InvalidEmailAddressError, InvalidPhoneNumberError, NonNegativeError, ValidationError } from '@quire/errors';
import { parseDate, parseDatetime, parseTime } from './datetime';
import type { DocField } from './definition';
import { fieldTypeSpec, VARCHAR_LEN, type ValueKind } from './fieldtypes';
import { pyLen } from '@quire/frappe-compat';

/**
 * Client value -> stored value for one field, or a 417. Stricter than Frappe on purpose: a value
 * that cannot be read as the field's type is refused instead of silently stored as 0.
 */

/** The largest magnitude numeric(21,9) holds. */
const MAX_DECIMAL = 1e12;

export function fieldLabel(field: Pick<DocField, 'label' | 'fieldname'>): string {
  return field.label ?? field.fieldname;
}

/** A short, safe description of a client value for an error message (never the whole of it). */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value === 'object' ? 'JSON object' : typeof value}`;
}

function invalid(field: DocField, value: unknown, what: string): never {
  throw new ValidationError(`Value for ${fieldLabel(field)} must be ${what}, got ${describe(value)}`, { title: 'Invalid Value' });
}

function toNumber(field: DocField, value: unknown, what: string): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) invalid(field, value, what);
    return value;
  }
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') {
    const s = value.trim().replace(/,/g, '');
    if (s !== '' && /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) return Number(s);
  }
  return invalid(field, value, what);
}

function coerceText(field: DocField, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') {
    // Postgres text cannot hold NUL; refuse it here rather than fail in the database.
    if (value.includes('\0')) invalid(field, value, 'text without NUL characters');
    return value;
  }
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  return invalid(field, value, 'text');
}

const COERCE: Record<Exclude<ValueKind, 'table' | 'none'>, (field: DocField, value: unknown) => unknown> = {
  text: coerceText,
  int(field, value) {
    if (value === null || value === undefined || value === '') return 0;
    const n = Math.trunc(toNumber(field, value, 'an integer'));
    if (!Number.isSafeInteger(n)) invalid(field, value, 'an integer within ±9007199254740991');
    return n;
  },
  float(field, value) {
    if (value === null || value === undefined || value === '') return field.fieldtype === 'Duration' ? null : 0;
    let n = toNumber(field, value, 'a number');
    const max = field.fieldtype === 'Rating' ? 10 : MAX_DECIMAL;
    if (Math.abs(n) >= max) invalid(field, value, `a number smaller than ${max}`);
    if (field.precision !== undefined) n = Number(n.toFixed(Math.min(9, Math.max(0, field.precision))));
    return n;
  },
  check(field, value) {
    if (value === null || value === undefined || value === '' || value === false || value === 0) return 0;
    if (value === true || value === 1) return 1;
    if (typeof value === 'string') {
      const s = value.trim().toLowerCase();
      if (s === '0' || s === 'false') return 0;
      if (s === '1' || s === 'true') return 1;
    }
    return invalid(field, value, '0 or 1');
  },
  date(field, value) {
    if (value === null || value === undefined || value === '') return null;
    const parsed = typeof value === 'string' ? parseDate(value) : undefined;
    return parsed ?? invalid(field, value, 'a date (YYYY-MM-DD)');
  },
  datetime(field, value) {
    if (value === null || value === undefined || value === '') return null;
    const parsed = typeof value === 'string' ? parseDatetime(value) : undefined;
    return parsed ?? invalid(field, value, 'a datetime (YYYY-MM-DD HH:MM:SS)');
  },
  time(field, value) {
    if (value === null || value === undefined || value === '') return null;
    const parsed = typeof value === 'string' ? parseTime(value) : undefined;
    return parsed ?? invalid(field, value, 'a time (HH:MM:SS)');
  },
  json(field, value) {
    if (value === null || value === undefined || value === '') return null;
    let text: string;
    try {
      text = typeof value === 'string' ? value : JSON.stringify(value);
      JSON.parse(text);
    } catch {
      return invalid(field, value, 'JSON');
    }
    if (text.includes('\0') || text.includes('\\u0000')) invalid(field, value, 'JSON without NUL characters');
    return text;
  },
};

/** Coerces a value for a field that has a column. */
export function coerceFieldValue(field: DocField, value: unknown): unknown {
  const kind = fieldTypeSpec(field.fieldtype).kind;
  if (kind === 'table' || kind === 'none') return value;
  return COERCE[kind](field, value);
}

/** Coerces a filter value for a column of the given kind; `field` only names it in errors. */
export function coerceFilterValue(kind: ValueKind, field: DocField, value: unknown): unknown {
  if (kind === 'table' || kind === 'none') return coerceText(field, value);
  if (kind === 'check') return COERCE.check(field, value);
  if (kind === 'int' || kind === 'float') {
    if (value === null || value === undefined || value === '') return 0;
    return toNumber(field, value, kind === 'int' ? 'an integer' : 'a number');
  }
  if (kind === 'json') return coerceText(field, value);
  return COERCE[kind](field, value);
}

const EMAIL_RE = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;
const PHONE_RE = /^[0-9+\-().\s]{1,30}$/;

/** Checks that need the whole field definition: length, options validators, non-negative. */
export function checkFieldValue(field: DocField, value: unknown, doctype: string): void {
  if (value === null || value === undefined || value === '') return;
  const spec = fieldTypeSpec(field.fieldtype);
  if (spec.varchar && typeof value === 'string') {
    const max = field.length && field.length > 0 ? field.length : VARCHAR_LEN;
    const length = pyLen(value);
    if (length > max) {
      const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
      throw new CharacterLengthExceededError(`${doctype}: '${fieldLabel(field)}' (${shown}) will get truncated, as max characters allowed is ${max}`, {
        title: 'Value too big',
      });
    }
  }
  if (field.non_negative && typeof value === 'number' && value < 0) {
    throw new NonNegativeError(`${fieldLabel(field)} cannot be negative`, { title: 'Negative Value' });
  }
  if (field.fieldtype === 'Data' && typeof value === 'string' && field.options) {
    const option = field.options.trim();
    if (option === 'Email') {
      for (const address of value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        if (!EMAIL_RE.test(address)) throw new InvalidEmailAddressError(`${address} is not a valid Email Address`, { title: 'Invalid Email Address' });
      }
    } else if (option === 'Phone' && !PHONE_RE.test(value)) {
      throw new InvalidPhoneNumberError(`${value} is not a valid Phone Number`, { title: 'Invalid Phone Number' });
    } else if (option === 'URL' && !hasHost(value)) {
      throw new ValidationError(`'${value}' is not a valid URL`, { title: 'Invalid URL' });
    }
  }
  if (field.fieldtype === 'Phone' && typeof value === 'string' && !PHONE_RE.test(value)) {
    throw new InvalidPhoneNumberError(`${value} is not a valid Phone Number`, { title: 'Invalid Phone Number' });
  }
  if (field.fieldtype === 'Select' && typeof value === 'string') {
    const options = selectOptions(field);
    if (options.length > 0 && !options.includes(value)) {
      throw new ValidationError(`${fieldLabel(field)} cannot be "${value}". It should be one of ${options.map((o) => `"${o}"`).join(', ')}`, {
        title: 'Invalid Value',
      });
    }
  }
}

/** frappe.utils.validate_url: a URL is valid when it has a host (any scheme). */
function hasHost(value: string): boolean {
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

/** Select options without the blank line Frappe allows at the top. */
export function selectOptions(field: Pick<DocField, 'options'>): string[] {
  return (field.options ?? '')
    .split('\n')
    .map((o) => o.trim())
    .filter((o) => o !== '');
}
