/**
 * Python's comparison and arithmetic operators over condition values. Where Python raises (TypeError,
 * ZeroDivisionError…) these throw `ConditionError`, except ordering of unorderable types, which answers false.
 */
import type { ArithOp, CompareOp } from './ast';
import { evaluationFailed } from './error';
import { asNumber, checkDepth, checkSize, isDict, kindOf, listItems, MISSING, ownValue, safeKey, typeName, valueAt, type Dict } from './values';

/** Python `==`: bools are ints, lists and dicts compare structurally, different types are unequal. */
export function pyEq(a: unknown, b: unknown, depth = 0): boolean {
  checkDepth(depth);
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na === nb;
  const ka = kindOf(a);
  if (ka !== kindOf(b)) return false;
  if (ka === 'none') return true;
  if (ka === 'str') return a === b;
  if (ka === 'list') {
    const la = listItems(a as unknown[]);
    const lb = listItems(b as unknown[]);
    return la.length === lb.length && la.every((x, i) => pyEq(x, lb[i], depth + 1));
  }
  const da = a as Dict;
  const db = b as Dict;
  const keys = Object.keys(da);
  if (keys.length !== Object.keys(db).length) return false;
  return keys.every((k) => {
    const y = ownValue(db, k);
    return y !== MISSING && pyEq(valueAt(da, k), y, depth + 1);
  });
}

function compareStrings(a: string, b: string): number {
  // Python compares code points; JavaScript's `<` compares UTF-16 units.
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0) as number;
    const cy = y.value.codePointAt(0) as number;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** Python ordering; undefined when the types cannot be ordered (Python raises TypeError; we answer False). */
function pyCompare(a: unknown, b: unknown, depth = 0): number | undefined {
  checkDepth(depth);
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined && nb !== undefined) {
    if (Number.isNaN(na) || Number.isNaN(nb)) return undefined;
    return na < nb ? -1 : na > nb ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (!Array.isArray(a) || !Array.isArray(b)) return undefined;
  const la = listItems(a);
  const lb = listItems(b);
  for (let i = 0; i < Math.min(la.length, lb.length); i++) {
    const x = la[i];
    const y = lb[i];
    if (pyEq(x, y, depth + 1)) continue;
    return pyCompare(x, y, depth + 1);
  }
  return la.length === lb.length ? 0 : la.length < lb.length ? -1 : 1;
}

function pyIn(item: unknown, container: unknown): boolean {
  if (typeof container === 'string') {
    if (typeof item !== 'string') evaluationFailed(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return container.includes(item);
  }
  if (Array.isArray(container)) return listItems(container).some((x) => pyEq(item, x));
  if (isDict(container)) return typeof item === 'string' && safeKey(item) && ownValue(container, item) !== MISSING;
  return evaluationFailed(`argument of type '${typeName(container)}' is not iterable`);
}

function pyIs(a: unknown, b: unknown): boolean {
  if (kindOf(a) !== kindOf(b)) return false;
  return a === b || (a === null && b === null);
}

/** One link of a comparison chain. */
export function compare(op: CompareOp, a: unknown, b: unknown): boolean {
  switch (op) {
    case '==':
      return pyEq(a, b);
    case '!=':
      return !pyEq(a, b);
    case 'in':
      return pyIn(a, b);
    case 'not in':
      return !pyIn(a, b);
    case 'is':
      return pyIs(a, b);
    case 'is not':
      return !pyIs(a, b);
  }
  const c = pyCompare(a, b);
  if (c === undefined) return false;
  return op === '<' ? c < 0 : op === '>' ? c > 0 : op === '<=' ? c <= 0 : c >= 0;
}

/** `seq * times` for a str or list, bounded by `MAX_VALUE_SIZE`. */
function repeat(seq: string | unknown[], times: number): string | unknown[] {
  if (!Number.isInteger(times)) evaluationFailed(`can't multiply sequence by non-int of type 'float'`);
  const n = Math.max(0, times);
  checkSize(seq.length * n);
  if (typeof seq === 'string') return seq.repeat(n);
  const list = listItems(seq);
  if (list.length === 0) return []; // `times` may be huge here (the size check passed as 0 × times is 0): do not loop that often
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) for (const x of list) out.push(x);
  return out;
}

function numberArithmetic(op: ArithOp, a: number, b: number): number {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      if (b === 0) evaluationFailed('division by zero');
      return a / b;
    case '//':
      if (b === 0) evaluationFailed('integer division or modulo by zero');
      return Math.floor(a / b);
    case '%': {
      if (b === 0) evaluationFailed('integer division or modulo by zero');
      const r = a % b;
      return r !== 0 && r < 0 !== b < 0 ? r + b : r; // the result takes the sign of the divisor, as in Python
    }
  }
}

/** Python `+ - * / // %`: numbers (bools as ints), str and list concatenation, and repetition by an int. */
export function arithmetic(op: ArithOp, a: unknown, b: unknown): unknown {
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined && nb !== undefined) return numberArithmetic(op, na, nb);
  if (op === '+' && typeof a === 'string' && typeof b === 'string') {
    checkSize(a.length + b.length);
    return a + b;
  }
  if (op === '+' && Array.isArray(a) && Array.isArray(b)) {
    checkSize(a.length + b.length);
    return [...listItems(a), ...listItems(b)];
  }
  if (op === '*') {
    if ((typeof a === 'string' || Array.isArray(a)) && nb !== undefined) return repeat(a, nb);
    if ((typeof b === 'string' || Array.isArray(b)) && na !== undefined) return repeat(b, na);
  }
  return evaluationFailed(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}
