/**
 * Python's `json.dumps(value)` text. Frappe writes `_server_messages`, `exc` and webhook bodies with
 * it, and clients compare those strings (and receivers check signatures over them), so we write
 * exactly the same text.
 */

/**
 * Python's `repr()` of a number as `json.dumps` and `str()` print it. JavaScript does not distinguish
 * `1` from `1.0`, so integral values with |n| < 1e16 print as Python ints (`1`, not `1.0`); everything
 * else prints as Python's shortest float repr (`0.1`, `1e-05`, `1e+16`, `inf`/`nan` are left to callers).
 */
export function pythonNumberRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n === 0 ? 0 : n);
  // Shortest round-trip digits (same algorithm as Python's repr), then Python's layout rules.
  const sci = Math.abs(n).toExponential(); // "d.ddde+x" / "de-x"
  const match = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(sci);
  if (!match) return String(n);
  const digits = (match[1] ?? '') + (match[2] ?? '');
  const exp = Number(match[3]);
  const sign = n < 0 ? '-' : '';
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
      const frac = digits.slice(exp + 1);
      return `${sign}${whole}.${frac || '0'}`;
    }
    return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const expText = `${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return `${sign}${mantissa}e${expText}`;
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

/** A JSON string literal as Python writes it with `ensure_ascii=True`: everything outside ' '..'~' becomes `\uxxxx`. */
function pythonJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    const code = s.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (code < 0x20 || code > 0x7e)
      out += `\\u${code.toString(16).padStart(4, '0')}`; // UTF-16 units: astral → surrogate pair
    else out += ch;
  }
  return `${out}"`;
}

/**
 * Python's `json.dumps(value)` with default arguments: separators `", "` and `": "`, `ensure_ascii=True`,
 * `allow_nan=True` (`NaN`, `Infinity`, `-Infinity`), keys in insertion order (a `Map` keeps any order;
 * plain objects follow JavaScript's own key order, which puts integer-like keys first).
 *
 * JavaScript-only values: `undefined` is omitted from objects and becomes `null` in arrays and at the top
 * (as `JSON.stringify` does); objects with `toJSON` (e.g. `Date`) are replaced by its result; `bigint`
 * prints as an integer. Numbers follow `pythonNumberRepr` (integers without `.0`). Functions, symbols and
 * circular structures throw a TypeError, as Python would.
 */
export function pythonJsonDumps(value: unknown): string {
  const stack = new Set<object>();

  const dump = (v: unknown, key: string): string | undefined => {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      v = (v as { toJSON: (k: string) => unknown }).toJSON(key);
    }
    switch (typeof v) {
      case 'undefined':
        return undefined;
      case 'boolean':
        return v ? 'true' : 'false';
      case 'string':
        return pythonJsonString(v);
      case 'bigint':
        return v.toString();
      case 'number':
        if (Number.isNaN(v)) return 'NaN';
        if (v === Infinity) return 'Infinity';
        if (v === -Infinity) return '-Infinity';
        return pythonNumberRepr(v);
      case 'function':
      case 'symbol':
        throw new TypeError(`Object of type ${typeof v} is not JSON serializable`);
    }
    if (v === null) return 'null';
    const obj = v as object;
    if (stack.has(obj)) throw new TypeError('Circular reference detected');
    stack.add(obj);
    try {
      if (Array.isArray(obj)) {
        if (obj.length === 0) return '[]';
        const items: string[] = [];
        for (let i = 0; i < obj.length; i++) items.push(dump(obj[i], String(i)) ?? 'null');
        return `[${items.join(', ')}]`;
      }
      const entries: Array<[string, unknown]> =
        obj instanceof Map ? [...(obj as Map<unknown, unknown>).entries()].map(([k, val]) => [String(k), val]) : Object.entries(obj);
      const parts: string[] = [];
      for (const [k, val] of entries) {
        const text = dump(val, k);
        if (text !== undefined) parts.push(`${pythonJsonString(k)}: ${text}`);
      }
      return parts.length === 0 ? '{}' : `{${parts.join(', ')}}`;
    } finally {
      stack.delete(obj);
    }
  };

  return dump(value, '') ?? 'null';
}
