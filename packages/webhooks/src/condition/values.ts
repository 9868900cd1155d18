/**
 * Host data seen as Python values: None (null/undefined), bool, int/float (number), str, list (array) and
 * dict (plain object). Only own enumerable data properties are ever read, so no getter runs; anything that is
 * not plain data (functions, class instances, symbols, bigint…) reads as None, and so do names that reach
 * JavaScript internals (`__…`, `constructor`, `prototype`).
 */
import { evaluationFailed } from './error';

export type Dict = Record<string, unknown>;
export type Kind = 'none' | 'bool' | 'number' | 'str' | 'list' | 'dict';

/** Largest string or list that `+` / `*` / `str()` may produce while evaluating. */
export const MAX_VALUE_SIZE = 100_000;
/** How deep `==`, ordering and `str()` follow nested lists and dicts. */
const MAX_DATA_DEPTH = 100;

/** What `ownValue` answers for a key that is not there, as distinct from a key holding None. */
export const MISSING: unique symbol = Symbol('missing');

export function isDict(v: unknown): v is Dict {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Host values that are not plain data (functions, class instances, symbols, bigint…) read as None. */
export function fromHost(v: unknown): unknown {
  if (v === undefined) return null;
  switch (typeof v) {
    case 'boolean':
    case 'number':
    case 'string':
      return v;
    case 'object':
      return v === null || Array.isArray(v) || isDict(v) ? v : null;
    default:
      return null;
  }
}

/** An own, enumerable data property converted with `fromHost`; never runs a getter. */
export function ownValue(obj: object, key: string | number): unknown {
  const d = Object.getOwnPropertyDescriptor(obj, key);
  return d !== undefined && d.enumerable === true && 'value' in d ? fromHost(d.value) : MISSING;
}

/** Like `ownValue`, with None for a missing key. */
export function valueAt(obj: object, key: string | number): unknown {
  const v = ownValue(obj, key);
  return v === MISSING ? null : v;
}

/** The elements of a host list as plain values (holes and accessors read as None). */
export function listItems(list: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < list.length; i++) out.push(valueAt(list, i));
  return out;
}

export function kindOf(v: unknown): Kind {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** Python's name for the type, for error messages. */
export function typeName(v: unknown): string {
  const kind = kindOf(v);
  if (kind === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return kind === 'none' ? 'NoneType' : kind;
}

/** Numbers, and bools as the ints they are in Python; undefined for anything else. */
export function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}

/** Called with the nesting depth by what walks into nested lists and dicts. */
export function checkDepth(depth: number): void {
  if (depth > MAX_DATA_DEPTH) evaluationFailed('value is nested too deeply');
}

/** Called with the length of a string or list about to be produced. */
export function checkSize(length: number): void {
  if (length > MAX_VALUE_SIZE) evaluationFailed(`result is too large (more than ${MAX_VALUE_SIZE} items or characters)`);
}

const FORBIDDEN_NAMES = new Set(['constructor', 'prototype', '__proto__']);

/** Whether a key may be read at all (dunder names and JavaScript's prototype plumbing read as missing). */
export function safeKey(key: string): boolean {
  return !key.startsWith('__') && !FORBIDDEN_NAMES.has(key);
}

/** `obj.key`: a dict's value, None for anything else (Frappe documents answer None for unknown fields). */
export function readAttribute(obj: unknown, key: string): unknown {
  return isDict(obj) && safeKey(key) ? valueAt(obj, key) : null;
}

/** `obj[index]`: Python indexing of str and list (negative counts from the end) and dict lookup; None when out of range, missing or not indexable. */
export function readIndex(obj: unknown, index: unknown): unknown {
  if (typeof index === 'boolean') index = index ? 1 : 0;
  if (Array.isArray(obj) || typeof obj === 'string') {
    if (typeof index !== 'number' || !Number.isInteger(index)) {
      evaluationFailed(`${typeName(obj)} indices must be integers, not ${typeName(index)}`);
    }
    if (typeof obj === 'string') {
      const chars = Array.from(obj);
      const i = index < 0 ? chars.length + index : index;
      return i >= 0 && i < chars.length ? chars[i] : null;
    }
    const i = index < 0 ? obj.length + index : index;
    return i >= 0 && i < obj.length ? valueAt(obj, i) : null;
  }
  if (isDict(obj)) return typeof index === 'string' ? readAttribute(obj, index) : null;
  return null;
}
