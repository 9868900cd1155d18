import { cstr } from '@quire/frappe-compat';
import { DataError, ValidationError, type FrappeError } from '@quire/errors';

/** The error texts of the list query language (Frappe's wording where Frappe has one). */

export function fieldNotPermitted(field: string): FrappeError {
  return new DataError(`Field not permitted in query: ${field}`);
}

export function restrictedExpression(): FrappeError {
  return new DataError('Use of sub-query or function is restricted');
}

export function restrictedFunction(fn: string): FrappeError {
  return new DataError(`Use of function ${fn} in field is restricted`);
}

export function illegalQuery(): FrappeError {
  return new ValidationError('Illegal SQL Query');
}

export function invalidParam(message: string): FrappeError {
  return new ValidationError(message);
}

export function selectColumnFirst(doctype: string): FrappeError {
  return new ValidationError(`Please select atleast 1 column from ${doctype} to sort/group`);
}

/** Short, safe rendering of a client value inside an error message. */
export function shown(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : cstr(value);
  } catch {
    text = '';
  }
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
