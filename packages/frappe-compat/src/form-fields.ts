/**
 * Request fields as Frappe's `form_dict` sees them: one value per key. A repeated text field keeps
 * its first value (werkzeug's MultiDict), except `key[]` (how axios sends arrays), which keeps every
 * value as a list under `key`.
 */
export function mergeFormFields(into: Record<string, unknown>, from: Record<string, unknown>, options: { keepRepeated?: boolean } = {}): void {
  for (const [key, value] of Object.entries(from)) {
    if (key.endsWith('[]')) into[key.slice(0, -2)] = Array.isArray(value) ? value : [value];
    else into[key] = Array.isArray(value) && !options.keepRepeated ? value[0] : value;
  }
}
