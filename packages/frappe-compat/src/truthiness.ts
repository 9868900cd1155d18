/**
 * How Frappe reads yes/no values. Arguments arrive as text (query string, form) or as JSON values,
 * and Frappe applies Python's rules to them; each helper names the Python/Frappe function it mirrors.
 */

/** Python's `bool(value)` over JSON-shaped values: None, False, 0, "", [] and {} are false. */
export function pyBool(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/**
 * A strict boolean parameter: `true`/`false`, `1`/`0`, as JSON values or as text (any case, padded);
 * undefined for anything else, so the caller can refuse it.
 */
export function parseBoolean(value: unknown): boolean | undefined {
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return undefined;
}

/** Frappe's `sbool` in a condition: "true"/"1" are true, "false"/"0"/"" false; anything else by Python's bool. */
export function sbool(value: unknown): boolean {
  if (typeof value === 'string' && value.trim() === '') return false;
  return parseBoolean(value) ?? pyBool(value);
}

/**
 * Frappe's `cint`: the integer part of a number or numeric text, else 0. JSON booleans count as 1/0,
 * and so do the words a form sends for a ticked box (`true`, `yes`, `on`).
 */
export function cint(value: unknown): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : 0;
  if (typeof value !== 'string') return 0;
  const text = value.trim().toLowerCase();
  if (text === 'true' || text === 'yes' || text === 'on') return 1;
  if (text === '') return 0;
  const n = Number(text);
  return Number.isFinite(n) ? Math.trunc(n) : 0;
}
