/** JSON.stringify as it behaves: undefined (not text) for a function, a symbol, or undefined itself. */
export const jsonStringify: (value: unknown, replacer?: (this: unknown, key: string, value: unknown) => unknown, space?: number) => string | undefined =
  JSON.stringify;

/**
 * Frappe's `cstr`: a value as text for messages, names and comparisons. None (null/undefined) is
 * "", text is itself, numbers and booleans print as JavaScript prints them, and anything else
 * (objects, lists) as its JSON text rather than "[object Object]".
 */
export function cstr(value: unknown): string {
  if (value === undefined || value === null) return '';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'symbol':
      return value.description ?? '';
    case 'function':
      return '';
    default:
      try {
        return jsonStringify(value) ?? '';
      } catch {
        return '';
      }
  }
}

/** Python's `len(text)`: code points, not UTF-16 units (an emoji is 1, as Frappe counts it). */
export function pyLen(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** The first `n` code points of `text` (Python's `text[:n]`). */
export function pySlice(text: string, n: number): string {
  return Array.from(text).slice(0, n).join('');
}
