import { ValidationError } from '@quire/errors';

/**
 * Arguments that may be JSON: they arrive as JSON text from a query string or form, or already as
 * values from a JSON body (Frappe's `frappe.parse_json` on `form_dict` values).
 */

/** A JSON text decoded (malformed: a 417 naming the argument); any other value as it is. */
export function decodeJsonArg(name: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new ValidationError(`Invalid JSON in ${name}`, { title: 'Invalid Request' });
  }
}

/** A text decoded when it is JSON, else kept as the text (a bare name where JSON is also accepted). */
export function jsonOrText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
