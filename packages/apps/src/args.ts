import { ValidationError } from '@quire/errors';

/**
 * Helpers for method arguments, which arrive as text from a query string or form, or as JSON
 * values from a JSON body (Frappe's parse_json on form_dict values).
 */

/** A JSON text is decoded (417 naming the argument when malformed); any other value is returned as is. */
export function decodeJsonArg(name: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new ValidationError(`Invalid JSON in ${name}`, { title: 'Invalid Request' });
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
