/**
 * A safe evaluator for Frappe webhook conditions: a small subset of Python expressions over `doc`.
 *
 * The source is tokenised and parsed into a tree once (no `eval`, no `Function`); evaluation walks the
 * tree over plain data. Only own enumerable data properties of plain objects and arrays are ever read
 * (getters are never run, functions and class instances read as None), names starting
 * with `__` and `constructor`/`prototype` read as None, the only callable things are a fixed list of
 * builtins and `.get()` on dicts, and every resource is bounded (source length, tree size, nesting depth,
 * size of produced strings and lists). Errors while evaluating (division by zero, `1 + "a"`, …) make the
 * condition false instead of throwing.
 */
import { pythonNumberRepr } from './signing';

export class ConditionError extends Error {
  /** 1-based column in the source where the problem was found, when it is a syntax problem. */
  readonly position: number | undefined;
  constructor(message: string, position?: number) {
    super(message);
    this.name = 'ConditionError';
    this.position = position;
  }
}

export interface ConditionScope {
  doc: Record<string, unknown>;
}

export type ConditionEvaluator = (scope: ConditionScope) => boolean;

export interface CompileConditionOptions {
  /** Called with the reason when an evaluation fails (the evaluator then returns false). */
  onError?: (error: ConditionError) => void;
}

export const MAX_CONDITION_LENGTH = 2000;
export const MAX_CONDITION_NODES = 500;
export const MAX_CONDITION_DEPTH = 50;
/** Largest string or list that `+` / `*` / `str()` may produce while evaluating. */
export const MAX_VALUE_SIZE = 100_000;

// ---------------------------------------------------------------------------------------------- tokens

type Token =
  | { type: 'num'; value: number; pos: number; text: string }
  | { type: 'str'; value: string; pos: number; text: string }
  | { type: 'name'; value: string; pos: number; text: string }
  | { type: 'op'; value: string; pos: number; text: string }
  | { type: 'eof'; pos: number; text: string };

const OPERATORS = [
  '**=', '//=', '>>=', '<<=', '...',
  '**', '//', '==', '!=', '<=', '>=', ':=', '<>', '->', '<<', '>>', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '@=',
  '+', '-', '*', '/', '%', '<', '>', '(', ')', '[', ']', ',', '.', ':', '{', '}', '@', '&', '|', '^', '~', '=', ';', '!',
];

function fail(message: string, index?: number): never {
  throw new ConditionError(
    `Invalid Condition: ${message}${index === undefined ? '' : ` at ${index + 1}`}`,
    index === undefined ? undefined : index + 1,
  );
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\', "'": "'", '"': '"', n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', a: '\x07',
};

function readString(src: string, start: number, quoteAt: number, raw: boolean): { value: string; end: number } {
  const quote = src[quoteAt] as string;
  if (src.startsWith(quote.repeat(3), quoteAt)) fail('triple-quoted strings are not supported', start);
  let out = '';
  let i = quoteAt + 1;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === quote) return { value: out, end: i + 1 };
    if (ch === '\n') break;
    if (ch !== '\\') {
      out += ch;
      i++;
      continue;
    }
    const next = src[i + 1];
    if (next === undefined) break;
    if (raw) {
      out += ch + next; // raw strings keep the backslash (and it still escapes the quote)
      i += 2;
      continue;
    }
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) {
      out += simple;
      i += 2;
    } else if (next === '\n') {
      i += 2;
    } else if (next === 'x' || next === 'u' || next === 'U') {
      const len = next === 'x' ? 2 : next === 'u' ? 4 : 8;
      const hex = src.slice(i + 2, i + 2 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) fail(`invalid \\${next} escape in string`, i);
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) fail('invalid unicode escape in string', i);
      out += String.fromCodePoint(code);
      i += 2 + len;
    } else if (next >= '0' && next <= '7') {
      const oct = /^[0-7]{1,3}/.exec(src.slice(i + 1))?.[0] ?? '0';
      out += String.fromCodePoint(parseInt(oct, 8));
      i += 1 + oct.length;
    } else if (next === 'N') {
      fail('\\N{...} escapes are not supported', i);
    } else {
      out += ch + next; // Python keeps unknown escapes as written
      i += 2;
    }
  }
  return fail('unterminated string', start);
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f') {
      i++;
      continue;
    }
    if (ch === '\\' && (src[i + 1] === '\n' || (src[i + 1] === '\r' && src[i + 2] === '\n'))) {
      i += src[i + 1] === '\n' ? 2 : 3; // explicit line continuation
      continue;
    }
    if (ch === '#') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const start = i;
    const number =
      /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?)/.exec(
        src.slice(i, i + 400),
      );
    if ((ch >= '0' && ch <= '9') || (ch === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const text = number?.[0];
      if (!text) return fail(`invalid number`, i);
      const after = src[i + text.length] ?? '';
      if (/[A-Za-z0-9_]/.test(after)) fail(`invalid number "${text}${after}"`, i);
      const clean = text.replace(/_/g, '');
      let value: number;
      if (/^0[xob]/i.test(clean)) value = Number(clean.toLowerCase());
      else if (/^[0-9]+$/.test(clean)) {
        if (/^0+[1-9]/.test(clean)) fail(`leading zeros in decimal integer literals are not permitted`, i);
        value = Number(clean);
      } else value = Number(clean);
      if (Number.isNaN(value)) fail(`invalid number "${text}"`, i);
      tokens.push({ type: 'num', value, pos: start, text });
      i += text.length;
      continue;
    }
    if (/[A-Za-z_]/.test(ch) || ch.charCodeAt(0) > 0x7f) {
      const name = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/u.exec(src.slice(i))?.[0];
      if (!name) return fail(`unexpected character "${ch}"`, i);
      const quoteAt = i + name.length;
      const quote = src[quoteAt];
      if ((quote === '"' || quote === "'") && /^[a-zA-Z]{1,2}$/.test(name)) {
        const prefix = name.toLowerCase();
        if (prefix !== 'r' && prefix !== 'u') fail(`string prefix "${name}" is not supported`, i);
        const { value, end } = readString(src, start, quoteAt, prefix === 'r');
        tokens.push({ type: 'str', value, pos: start, text: src.slice(start, end) });
        i = end;
        continue;
      }
      tokens.push({ type: 'name', value: name, pos: start, text: name });
      i += name.length;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const { value, end } = readString(src, start, i, false);
      tokens.push({ type: 'str', value, pos: start, text: src.slice(start, end) });
      i = end;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) return fail(`unexpected character "${ch}"`, i);
    tokens.push({ type: 'op', value: op, pos: start, text: op });
    i += op.length;
  }
  tokens.push({ type: 'eof', pos: src.length, text: 'end of condition' });
  return tokens;
}

// ----------------------------------------------------------------------------------------------- tree

type CompareOp = '==' | '!=' | '<' | '>' | '<=' | '>=' | 'in' | 'not in' | 'is' | 'is not';
type ArithOp = '+' | '-' | '*' | '/' | '//' | '%';
const BUILTINS = ['len', 'str', 'int', 'float', 'abs', 'bool'] as const;
type Builtin = (typeof BUILTINS)[number];

type Node =
  | { k: 'const'; value: unknown }
  | { k: 'doc' }
  | { k: 'list'; items: Node[] }
  | { k: 'attr'; obj: Node; name: string }
  | { k: 'index'; obj: Node; index: Node }
  | { k: 'call'; fn: Builtin; args: Node[] }
  | { k: 'get'; obj: Node; args: Node[] }
  | { k: 'not'; operand: Node }
  | { k: 'neg' | 'pos'; operand: Node }
  | { k: 'and' | 'or'; left: Node; right: Node }
  | { k: 'arith'; op: ArithOp; left: Node; right: Node }
  | { k: 'compare'; first: Node; ops: CompareOp[]; rest: Node[] }
  | { k: 'ifelse'; test: Node; then: Node; else: Node };

const PYTHON_KEYWORDS = new Set([
  'lambda', 'for', 'while', 'def', 'class', 'import', 'from', 'as', 'with', 'yield', 'await', 'async', 'return',
  'del', 'global', 'nonlocal', 'assert', 'raise', 'try', 'except', 'finally', 'pass', 'break', 'continue', 'elif',
]);
const CONSTANTS: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ['True', true], ['False', false], ['None', null], ['true', true], ['false', false], ['null', null],
]);

function describe(tok: Token): string {
  return tok.type === 'eof' ? 'end of condition' : `"${tok.text.length > 30 ? `${tok.text.slice(0, 30)}…` : tok.text}"`;
}

class Parser {
  private i = 0;
  private depth = 0;
  private nodes = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.expr();
    const tok = this.peek();
    if (tok.type !== 'eof') this.unexpected(tok);
    return node;
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)] as Token;
  }
  private next(): Token {
    const tok = this.peek();
    if (this.i < this.tokens.length - 1) this.i++;
    return tok;
  }
  private isOp(value: string, offset = 0): boolean {
    const tok = this.peek(offset);
    return tok.type === 'op' && tok.value === value;
  }
  private isName(value: string, offset = 0): boolean {
    const tok = this.peek(offset);
    return tok.type === 'name' && tok.value === value;
  }
  private expectOp(value: string): void {
    if (!this.isOp(value)) {
      const tok = this.peek();
      fail(`expected "${value}" but found ${describe(tok)}`, tok.pos);
    }
    this.next();
  }
  private unexpected(tok: Token): never {
    if (tok.type === 'name' && PYTHON_KEYWORDS.has(tok.value)) fail(`"${tok.value}" is not supported`, tok.pos);
    if (tok.type === 'op' && tok.value === ':=') fail('assignment expressions (":=") are not supported', tok.pos);
    if (tok.type === 'eof') fail('unexpected end of condition', tok.pos);
    return fail(`unexpected token ${describe(tok)}`, tok.pos);
  }
  private node<N extends Node>(n: N, at: number): N {
    if (++this.nodes > MAX_CONDITION_NODES) {
      fail(`condition is too complex (more than ${MAX_CONDITION_NODES} parts)`, at);
    }
    return n;
  }
  private enter(at: number): void {
    if (++this.depth > MAX_CONDITION_DEPTH) fail(`condition is nested too deeply`, at);
  }

  /** expr := or_expr ['if' or_expr 'else' expr] */
  private expr(): Node {
    const at = this.peek().pos;
    this.enter(at);
    const value = this.orExpr();
    let result = value;
    if (this.isName('if')) {
      this.next();
      const test = this.orExpr();
      if (!this.isName('else')) fail(`expected "else" but found ${describe(this.peek())}`, this.peek().pos);
      this.next();
      result = this.node({ k: 'ifelse', test, then: value, else: this.expr() }, at);
    }
    this.depth--;
    return result;
  }

  private orExpr(): Node {
    let left = this.andExpr();
    while (this.isName('or')) {
      const at = this.next().pos;
      left = this.node({ k: 'or', left, right: this.andExpr() }, at);
    }
    return left;
  }

  private andExpr(): Node {
    let left = this.notExpr();
    while (this.isName('and')) {
      const at = this.next().pos;
      left = this.node({ k: 'and', left, right: this.notExpr() }, at);
    }
    return left;
  }

  private notExpr(): Node {
    if (this.isName('not')) {
      const at = this.next().pos;
      this.enter(at);
      const operand = this.notExpr();
      this.depth--;
      return this.node({ k: 'not', operand }, at);
    }
    return this.comparison();
  }

  private compareOp(): CompareOp | undefined {
    const tok = this.peek();
    if (tok.type === 'op' && ['==', '!=', '<', '>', '<=', '>='].includes(tok.value)) return tok.value as CompareOp;
    if (tok.type === 'op' && tok.value === '<>') fail('"<>" is not supported, use "!="', tok.pos);
    if (this.isName('in')) return 'in';
    if (this.isName('not') && this.isName('in', 1)) return 'not in';
    if (this.isName('is')) return this.isName('not', 1) ? 'is not' : 'is';
    return undefined;
  }

  private comparison(): Node {
    const at = this.peek().pos;
    const first = this.arith();
    const ops: CompareOp[] = [];
    const rest: Node[] = [];
    for (let op = this.compareOp(); op !== undefined; op = this.compareOp()) {
      this.next();
      if (op === 'not in' || op === 'is not') this.next();
      ops.push(op);
      rest.push(this.arith());
    }
    return ops.length === 0 ? first : this.node({ k: 'compare', first, ops, rest }, at);
  }

  private arith(): Node {
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const tok = this.next();
      left = this.node({ k: 'arith', op: tok.text as ArithOp, left, right: this.term() }, tok.pos);
    }
    return left;
  }

  private term(): Node {
    let left = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('//') || this.isOp('%')) {
      const tok = this.next();
      left = this.node({ k: 'arith', op: tok.text as ArithOp, left, right: this.unary() }, tok.pos);
    }
    return left;
  }

  private unary(): Node {
    if (this.isOp('-') || this.isOp('+')) {
      const tok = this.next();
      this.enter(tok.pos);
      const operand = this.unary();
      this.depth--;
      return this.node({ k: tok.text === '-' ? 'neg' : 'pos', operand }, tok.pos);
    }
    return this.postfix();
  }

  private postfix(): Node {
    const startTok = this.peek();
    let builtin: Builtin | undefined;
    let node: Node | undefined;
    if (startTok.type === 'name' && (BUILTINS as readonly string[]).includes(startTok.value)) {
      this.next();
      builtin = startTok.value as Builtin;
      if (!this.isOp('(')) fail(`"${builtin}" must be called`, startTok.pos);
    } else {
      node = this.atom();
    }
    for (;;) {
      const tok = this.peek();
      if (tok.type !== 'op') break;
      if (tok.value === '(') {
        this.next();
        const args = this.callArgs();
        if (builtin !== undefined) {
          const max = 1;
          const min = builtin === 'len' || builtin === 'abs' ? 1 : 0;
          if (args.length < min || args.length > max) {
            fail(`${builtin}() takes exactly one argument (${args.length} given)`, tok.pos);
          }
          node = this.node({ k: 'call', fn: builtin, args }, tok.pos);
          builtin = undefined;
        } else if (node?.k === 'attr' && node.name === 'get') {
          if (args.length < 1 || args.length > 2) fail(`get() takes 1 or 2 arguments (${args.length} given)`, tok.pos);
          node = this.node({ k: 'get', obj: node.obj, args }, tok.pos);
        } else {
          const what = node?.k === 'attr' ? `"${node.name}"` : 'this value';
          fail(`calling ${what} is not allowed (only ${BUILTINS.join(', ')} and .get())`, tok.pos);
        }
      } else if (tok.value === '.') {
        this.next();
        const name = this.next();
        if (name.type !== 'name') fail(`expected an attribute name after "." but found ${describe(name)}`, name.pos);
        node = this.node({ k: 'attr', obj: node as Node, name: name.value }, name.pos);
      } else if (tok.value === '[') {
        this.next();
        const index = this.expr();
        if (this.isOp(':')) fail('slices are not supported', this.peek().pos);
        this.expectOp(']');
        node = this.node({ k: 'index', obj: node as Node, index }, tok.pos);
      } else break;
    }
    return node as Node;
  }

  private callArgs(): Node[] {
    const args: Node[] = [];
    while (!this.isOp(')')) {
      if (this.isOp('*') || this.isOp('**')) fail('argument unpacking is not supported', this.peek().pos);
      if (this.peek().type === 'name' && this.isOp('=', 1)) fail('keyword arguments are not supported', this.peek().pos);
      args.push(this.expr());
      if (this.isName('for')) fail('comprehensions are not supported', this.peek().pos);
      if (!this.isOp(',')) break;
      this.next();
    }
    this.expectOp(')');
    return args;
  }

  /** Comma-separated expressions up to `close`; returns whether a comma was seen (tuple-ness). */
  private sequence(close: string, items: Node[]): boolean {
    let comma = false;
    while (!this.isOp(close)) {
      if (this.isOp('*')) fail('unpacking is not supported', this.peek().pos);
      items.push(this.expr());
      if (this.isName('for')) fail('comprehensions are not supported', this.peek().pos);
      if (this.isOp(':=')) fail('assignment expressions (":=") are not supported', this.peek().pos);
      if (!this.isOp(',')) break;
      comma = true;
      this.next();
    }
    this.expectOp(close);
    return comma;
  }

  private atom(): Node {
    const tok = this.next();
    switch (tok.type) {
      case 'num':
        return this.node({ k: 'const', value: tok.value }, tok.pos);
      case 'str': {
        let value = tok.value;
        while (this.peek().type === 'str') value += (this.next() as { value: string }).value; // "a" "b"
        return this.node({ k: 'const', value }, tok.pos);
      }
      case 'name': {
        if (CONSTANTS.has(tok.value)) return this.node({ k: 'const', value: CONSTANTS.get(tok.value) }, tok.pos);
        if (tok.value === 'doc') return this.node({ k: 'doc' }, tok.pos);
        if (PYTHON_KEYWORDS.has(tok.value)) this.unexpected(tok);
        if (['and', 'or', 'not', 'in', 'is', 'if', 'else'].includes(tok.value)) this.unexpected(tok);
        return fail(`name "${tok.value}" is not allowed (only "doc" can be used)`, tok.pos);
      }
      case 'op': {
        if (tok.value === '(') {
          const items: Node[] = [];
          const tuple = this.sequence(')', items);
          if (items.length === 1 && !tuple) return items[0] as Node;
          return this.node({ k: 'list', items }, tok.pos); // tuples behave as lists
        }
        if (tok.value === '[') {
          const items: Node[] = [];
          this.sequence(']', items);
          return this.node({ k: 'list', items }, tok.pos);
        }
        if (tok.value === '{') fail('dict and set literals are not supported', tok.pos);
        return this.unexpected(tok);
      }
      case 'eof':
        return this.unexpected(tok);
    }
  }
}

// ------------------------------------------------------------------------------------------ evaluation

type Dict = Record<string, unknown>;
type Kind = 'none' | 'bool' | 'number' | 'str' | 'list' | 'dict';

function isDict(v: unknown): v is Dict {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Host values that are not plain data (functions, class instances, symbols, bigint…) read as None. */
function fromHost(v: unknown): unknown {
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

const MISSING: unique symbol = Symbol('missing');

/** An own, enumerable data property converted with `fromHost`; never runs a getter. */
function own(obj: object, key: string | number): unknown {
  const d = Object.getOwnPropertyDescriptor(obj, key);
  return d !== undefined && d.enumerable === true && 'value' in d ? fromHost(d.value) : MISSING;
}

function value(obj: object, key: string | number): unknown {
  const v = own(obj, key);
  return v === MISSING ? null : v;
}

/** The elements of a host list as plain values (holes and accessors read as None). */
function items(list: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < list.length; i++) out.push(value(list, i));
  return out;
}

function kindOf(v: unknown): Kind {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

function typeName(v: unknown): string {
  const kind = kindOf(v);
  if (kind === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return kind === 'none' ? 'NoneType' : kind;
}

function runtime(message: string): never {
  throw new ConditionError(message);
}

const FORBIDDEN_NAMES = new Set(['constructor', 'prototype', '__proto__']);

function safeKey(key: string): boolean {
  return !key.startsWith('__') && !FORBIDDEN_NAMES.has(key);
}

function readKey(obj: unknown, key: string): unknown {
  return isDict(obj) && safeKey(key) ? value(obj, key) : null;
}

function readIndex(obj: unknown, index: unknown): unknown {
  if (typeof index === 'boolean') index = index ? 1 : 0;
  if (Array.isArray(obj) || typeof obj === 'string') {
    if (typeof index !== 'number' || !Number.isInteger(index)) {
      runtime(`${typeName(obj)} indices must be integers, not ${typeName(index)}`);
    }
    if (typeof obj === 'string') {
      const chars = Array.from(obj);
      const i = index < 0 ? chars.length + index : index;
      return i >= 0 && i < chars.length ? chars[i] : null;
    }
    const i = index < 0 ? obj.length + index : index;
    return i >= 0 && i < obj.length ? value(obj, i) : null;
  }
  if (isDict(obj)) return typeof index === 'string' ? readKey(obj, index) : null;
  return null;
}

/** Python truthiness. */
function truthy(v: unknown): boolean {
  switch (kindOf(v)) {
    case 'none':
      return false;
    case 'bool':
      return v as boolean;
    case 'number':
      return v !== 0;
    case 'str':
    case 'list':
      return (v as string | unknown[]).length > 0;
    case 'dict':
      return Object.keys(v as Dict).length > 0;
  }
}

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}

const MAX_DATA_DEPTH = 100;

/** Python `==`: bools are ints, lists and dicts compare structurally, different types are unequal. */
function pyEq(a: unknown, b: unknown, depth = 0): boolean {
  if (depth > MAX_DATA_DEPTH) runtime('value is nested too deeply');
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na === nb;
  const ka = kindOf(a);
  if (ka !== kindOf(b)) return false;
  if (ka === 'none') return true;
  if (ka === 'str') return a === b;
  if (ka === 'list') {
    const la = items(a as unknown[]);
    const lb = items(b as unknown[]);
    return la.length === lb.length && la.every((x, i) => pyEq(x, lb[i], depth + 1));
  }
  const da = a as Dict;
  const db = b as Dict;
  const keys = Object.keys(da);
  if (keys.length !== Object.keys(db).length) return false;
  return keys.every((k) => {
    const y = own(db, k);
    return y !== MISSING && pyEq(value(da, k), y, depth + 1);
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
  if (depth > MAX_DATA_DEPTH) runtime('value is nested too deeply');
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined && nb !== undefined) {
    if (Number.isNaN(na) || Number.isNaN(nb)) return undefined;
    return na < nb ? -1 : na > nb ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (Array.isArray(a) && Array.isArray(b)) {
    a = items(a);
    b = items(b);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const x: unknown = a[i];
      const y: unknown = b[i];
      if (pyEq(x, y, depth + 1)) continue;
      return pyCompare(x, y, depth + 1);
    }
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  return undefined;
}

function pyIn(item: unknown, container: unknown): boolean {
  if (typeof container === 'string') {
    if (typeof item !== 'string') runtime(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return container.includes(item);
  }
  if (Array.isArray(container)) return items(container).some((x) => pyEq(item, x));
  if (isDict(container)) return typeof item === 'string' && safeKey(item) && own(container, item) !== MISSING;
  return runtime(`argument of type '${typeName(container)}' is not iterable`);
}

function pyIs(a: unknown, b: unknown): boolean {
  if (kindOf(a) !== kindOf(b)) return false;
  return a === b || (a === null && b === null);
}

function compareOnce(op: CompareOp, a: unknown, b: unknown): boolean {
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

function checkSize(length: number): void {
  if (length > MAX_VALUE_SIZE) runtime(`result is too large (more than ${MAX_VALUE_SIZE} items or characters)`);
}

function repeat(seq: string | unknown[], times: number): string | unknown[] {
  if (!Number.isInteger(times)) runtime(`can't multiply sequence by non-int of type 'float'`);
  const n = Math.max(0, times);
  checkSize(seq.length * n);
  if (typeof seq === 'string') return seq.repeat(n);
  const list = items(seq);
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) for (const x of list) out.push(x);
  return out;
}

function arith(op: ArithOp, a: unknown, b: unknown): unknown {
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined && nb !== undefined) {
    switch (op) {
      case '+':
        return na + nb;
      case '-':
        return na - nb;
      case '*':
        return na * nb;
      case '/':
        if (nb === 0) runtime('division by zero');
        return na / nb;
      case '//':
        if (nb === 0) runtime('integer division or modulo by zero');
        return Math.floor(na / nb);
      case '%': {
        if (nb === 0) runtime('integer division or modulo by zero');
        const r = na % nb;
        return r !== 0 && r < 0 !== nb < 0 ? r + nb : r;
      }
    }
  }
  if (op === '+' && typeof a === 'string' && typeof b === 'string') {
    checkSize(a.length + b.length);
    return a + b;
  }
  if (op === '+' && Array.isArray(a) && Array.isArray(b)) {
    checkSize(a.length + b.length);
    return [...items(a), ...items(b)];
  }
  if (op === '*') {
    if ((typeof a === 'string' || Array.isArray(a)) && nb !== undefined) return repeat(a, nb);
    if ((typeof b === 'string' || Array.isArray(b)) && na !== undefined) return repeat(b, na);
  }
  return runtime(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

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
  if (depth > MAX_DATA_DEPTH) runtime('value is nested too deeply');
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
      out = `[${items(v as unknown[]).map((x) => pyStr(x, true, depth + 1)).join(', ')}]`;
      break;
    case 'dict':
      out = `{${Object.keys(v as Dict)
        .map((k) => `${reprString(k)}: ${pyStr(value(v as Dict, k), true, depth + 1)}`)
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
    if (!Number.isFinite(n)) runtime(`cannot convert float ${pythonNumberRepr(n)} to integer`);
    return Math.trunc(n);
  }
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^[+-]?\d(?:_?\d)*$/.test(s)) return Number(s.replace(/_/g, ''));
    runtime(`invalid literal for int() with base 10: ${reprString(v.slice(0, 50))}`);
  }
  return runtime(`int() argument must be a string or a number, not '${typeName(v)}'`);
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
    runtime(`could not convert string to float: ${reprString(v.slice(0, 50))}`);
  }
  return runtime(`float() argument must be a string or a number, not '${typeName(v)}'`);
}

function callBuiltin(fn: Builtin, args: unknown[]): unknown {
  const v = args[0];
  switch (fn) {
    case 'len':
      if (typeof v === 'string') return Array.from(v).length;
      if (Array.isArray(v)) return v.length;
      if (isDict(v)) return Object.keys(v).length;
      return runtime(`object of type '${typeName(v)}' has no len()`);
    case 'str':
      return v === undefined ? '' : pyStr(v);
    case 'int':
      return toInt(v);
    case 'float':
      return toFloat(v);
    case 'abs': {
      const n = asNumber(v);
      if (n === undefined) runtime(`bad operand type for abs(): '${typeName(v)}'`);
      return Math.abs(n);
    }
    case 'bool':
      return v === undefined ? false : truthy(v);
  }
}

function evaluate(node: Node, doc: unknown): unknown {
  switch (node.k) {
    case 'const':
      return node.value;
    case 'doc':
      return doc;
    case 'list': {
      const items = node.items.map((n) => evaluate(n, doc));
      return items;
    }
    case 'attr':
      return readKey(evaluate(node.obj, doc), node.name);
    case 'index':
      return readIndex(evaluate(node.obj, doc), evaluate(node.index, doc));
    case 'call':
      return callBuiltin(node.fn, node.args.map((n) => evaluate(n, doc)));
    case 'get': {
      const obj = evaluate(node.obj, doc);
      const key = evaluate(node.args[0] as Node, doc);
      const fallback = node.args[1] === undefined ? null : evaluate(node.args[1], doc);
      if (!isDict(obj)) return runtime(`'${typeName(obj)}' object has no attribute 'get'`);
      const found = typeof key === 'string' && safeKey(key) ? own(obj, key) : MISSING;
      return found === MISSING ? fallback : found;
    }
    case 'not':
      return !truthy(evaluate(node.operand, doc));
    case 'neg':
    case 'pos': {
      const v = evaluate(node.operand, doc);
      const n = asNumber(v);
      if (n === undefined) runtime(`bad operand type for unary ${node.k === 'neg' ? '-' : '+'}: '${typeName(v)}'`);
      return node.k === 'neg' ? -n : n;
    }
    case 'and': {
      const left = evaluate(node.left, doc);
      return truthy(left) ? evaluate(node.right, doc) : left;
    }
    case 'or': {
      const left = evaluate(node.left, doc);
      return truthy(left) ? left : evaluate(node.right, doc);
    }
    case 'arith':
      return arith(node.op, evaluate(node.left, doc), evaluate(node.right, doc));
    case 'compare': {
      let left = evaluate(node.first, doc);
      for (let i = 0; i < node.ops.length; i++) {
        const right = evaluate(node.rest[i] as Node, doc);
        if (!compareOnce(node.ops[i] as CompareOp, left, right)) return false;
        left = right;
      }
      return true;
    }
    case 'ifelse':
      return truthy(evaluate(node.test, doc)) ? evaluate(node.then, doc) : evaluate(node.else, doc);
  }
}

/**
 * Compiles a Frappe webhook condition. Throws `ConditionError` ("Invalid Condition: …") for syntax errors,
 * names other than `doc`, calls other than the builtins, or a condition over the size limits. An empty
 * (or whitespace-only) condition is always true. The evaluator never throws: failures evaluate to false.
 */
export function compileCondition(source: string, options: CompileConditionOptions = {}): ConditionEvaluator {
  if (typeof source !== 'string') throw new ConditionError('Invalid Condition: condition must be a string');
  if (source.length > MAX_CONDITION_LENGTH) {
    throw new ConditionError(`Invalid Condition: condition is longer than ${MAX_CONDITION_LENGTH} characters`);
  }
  const tokens = tokenize(source);
  if (tokens.length === 1) return () => true;
  const tree = new Parser(tokens).parse();
  return (scope: ConditionScope): boolean => {
    try {
      return truthy(evaluate(tree, fromHost(scope?.doc)));
    } catch (err) {
      const error =
        err instanceof ConditionError
          ? err
          : new ConditionError(err instanceof RangeError ? 'condition is too complex to evaluate' : String(err));
      options.onError?.(error);
      return false;
    }
  };
}
