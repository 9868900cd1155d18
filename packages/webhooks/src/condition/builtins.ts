/** The builtins a condition may call: `len`, `str`, `int`, `float`, `abs`, `bool`, with Python's results and errors. */
import { pyBool, pythonNumberRepr } from '@quire/frappe-compat';
import type { Builtin } from './ast';
import { evaluationFailed } from './error';
import { asNumber, checkDepth, checkSize, isDict, kindOf, listItems, typeName, valueAt, type Dict } from './values';

/** Python `repr()` of a str: single quotes unless only double quotes avoid escaping. */
function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) as number;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** Python `str()` (and `repr()` inside containers), bounded in size. */
function pyStr(v: unknown, inner = false, depth = 0): string {
  checkDepth(depth);
  let out: string;
  switch (kindOf(v)) {
    case 'none':
      return 'None';
    case 'bool':
      return v ? 'True' : 'False';
    case 'number':
      return pythonNumberRepr(v as number);
    case 'str':
      return inner ? reprString(v as string) : (v as string);
    case 'list':
      out = `[${listItems(v as unknown[])
        .map((x) => pyStr(x, true, depth + 1))
        .join(', ')}]`;
      break;
    case 'dict':
      out = `{${Object.keys(v as Dict)
        .map((k) => `${reprString(k)}: ${pyStr(valueAt(v as Dict, k), true, depth + 1)}`)
        .join(', ')}}`;
      break;
  }
  checkSize(out.length);
  return out;
}

function toInt(v: unknown): number {
  if (v === undefined) return 0;
  const n = asNumber(v);
  if (n !== undefined) {
    if (!Number.isFinite(n)) evaluationFailed(`cannot convert float ${pythonNumberRepr(n)} to integer`);
    return Math.trunc(n);
  }
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^[+-]?\d(?:_?\d)*$/.test(s)) return Number(s.replace(/_/g, ''));
    evaluationFailed(`invalid literal for int() with base 10: ${reprString(v.slice(0, 50))}`);
  }
  return evaluationFailed(`int() argument must be a string or a number, not '${typeName(v)}'`);
}

function toFloat(v: unknown): number {
  if (v === undefined) return 0;
  const n = asNumber(v);
  if (n !== undefined) return n;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (/^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:e[+-]?\d(?:_?\d)*)?$/.test(s)) {
      return Number(s.replace(/_/g, ''));
    }
    const special = /^([+-]?)(inf|infinity|nan)$/.exec(s);
    if (special) return special[2] === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity;
    evaluationFailed(`could not convert string to float: ${reprString(v.slice(0, 50))}`);
  }
  return evaluationFailed(`float() argument must be a string or a number, not '${typeName(v)}'`);
}

/** Calls a builtin with its evaluated arguments (the parser has checked how many); no argument is `undefined`. */
export function callBuiltin(fn: Builtin, args: unknown[]): unknown {
  const v = args[0];
  switch (fn) {
    case 'len':
      if (typeof v === 'string') return Array.from(v).length;
      if (Array.isArray(v)) return v.length;
      if (isDict(v)) return Object.keys(v).length;
      return evaluationFailed(`object of type '${typeName(v)}' has no len()`);
    case 'str':
      return v === undefined ? '' : pyStr(v);
    case 'int':
      return toInt(v);
    case 'float':
      return toFloat(v);
    case 'abs': {
      const n = asNumber(v);
      if (n === undefined) evaluationFailed(`bad operand type for abs(): '${typeName(v)}'`);
      return Math.abs(n);
    }
    case 'bool':
      return pyBool(v); // bool() with no argument is False, as pyBool(undefined) is
  }
}
