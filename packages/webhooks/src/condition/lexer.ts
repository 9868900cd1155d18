/**
 * Source text -> tokens, following Python's lexical rules for the parts a condition may use (numbers with
 * underscores and 0x/0o/0b, single-line strings with escapes and r/u prefixes, comments, line continuations).
 * Every Python operator is recognised, even the ones the parser then refuses, so errors can name them.
 */
import { invalidCondition } from './error';

export type Token =
  | { type: 'num'; value: number; pos: number; text: string }
  | { type: 'str'; value: string; pos: number; text: string }
  | { type: 'name'; value: string; pos: number; text: string }
  | { type: 'op'; value: string; pos: number; text: string }
  | { type: 'eof'; pos: number; text: string };

/** Longest first, so `**=` is not read as `**` and `=`. */
// prettier-ignore
const OPERATORS = [
  '**=', '//=', '>>=', '<<=', '...',
  '**', '//', '==', '!=', '<=', '>=', ':=', '<>', '->', '<<', '>>', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '@=',
  '+', '-', '*', '/', '%', '<', '>', '(', ')', '[', ']', ',', '.', ':', '{', '}', '@', '&', '|', '^', '~', '=', ';', '!',
];

const NUMBER = /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?)/;
const NAME = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/u;

// prettier-ignore
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\', "'": "'", '"': '"', n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', a: '\x07',
};

/** How a token is named in an error message. */
export function describeToken(tok: Token): string {
  return tok.type === 'eof' ? 'end of condition' : `"${tok.text.length > 30 ? `${tok.text.slice(0, 30)}…` : tok.text}"`;
}

/** A string literal whose opening quote is at `quoteAt` (its prefix, if any, starts at `start`). */
function readString(src: string, start: number, quoteAt: number, raw: boolean): { value: string; end: number } {
  const quote = src[quoteAt] as string;
  if (src.startsWith(quote.repeat(3), quoteAt)) invalidCondition('triple-quoted strings are not supported', start);
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
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) invalidCondition(`invalid \\${next} escape in string`, i);
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) invalidCondition('invalid unicode escape in string', i);
      out += String.fromCodePoint(code);
      i += 2 + len;
    } else if (next >= '0' && next <= '7') {
      const oct = /^[0-7]{1,3}/.exec(src.slice(i + 1))?.[0] ?? '0';
      out += String.fromCodePoint(parseInt(oct, 8));
      i += 1 + oct.length;
    } else if (next === 'N') {
      invalidCondition('\\N{...} escapes are not supported', i);
    } else {
      out += ch + next; // Python keeps unknown escapes as written
      i += 2;
    }
  }
  return invalidCondition('unterminated string', start);
}

function readNumber(src: string, start: number): Token {
  const text = NUMBER.exec(src.slice(start, start + 400))?.[0];
  if (!text) return invalidCondition(`invalid number`, start);
  const after = src[start + text.length] ?? '';
  if (/[A-Za-z0-9_]/.test(after)) invalidCondition(`invalid number "${text}${after}"`, start);
  const clean = text.replace(/_/g, '');
  if (/^0+[1-9][0-9]*$/.test(clean)) invalidCondition(`leading zeros in decimal integer literals are not permitted`, start);
  const value = /^0[xob]/i.test(clean) ? Number(clean.toLowerCase()) : Number(clean);
  if (Number.isNaN(value)) invalidCondition(`invalid number "${text}"`, start);
  return { type: 'num', value, pos: start, text };
}

/** A name, or a string literal when the name is a prefix (`r"…"`, `u'…'`) right before a quote. */
function readNameOrPrefixedString(src: string, start: number): Token {
  const name = NAME.exec(src.slice(start))?.[0];
  if (!name) return invalidCondition(`unexpected character "${src[start] as string}"`, start);
  const quoteAt = start + name.length;
  const quote = src[quoteAt];
  if ((quote === '"' || quote === "'") && /^[a-zA-Z]{1,2}$/.test(name)) {
    const prefix = name.toLowerCase();
    if (prefix !== 'r' && prefix !== 'u') invalidCondition(`string prefix "${name}" is not supported`, start);
    const { value, end } = readString(src, start, quoteAt, prefix === 'r');
    return { type: 'str', value, pos: start, text: src.slice(start, end) };
  }
  return { type: 'name', value: name, pos: start, text: name };
}

function readToken(src: string, start: number): Token {
  const ch = src[start] as string;
  if ((ch >= '0' && ch <= '9') || (ch === '.' && /[0-9]/.test(src[start + 1] ?? ''))) return readNumber(src, start);
  if (/[A-Za-z_]/.test(ch) || ch.charCodeAt(0) > 0x7f) return readNameOrPrefixedString(src, start);
  if (ch === '"' || ch === "'") {
    const { value, end } = readString(src, start, start, false);
    return { type: 'str', value, pos: start, text: src.slice(start, end) };
  }
  const op = OPERATORS.find((o) => src.startsWith(o, start));
  if (!op) return invalidCondition(`unexpected character "${ch}"`, start);
  return { type: 'op', value: op, pos: start, text: op };
}

/** Where the next token starts: after whitespace, explicit line continuations and comments. */
function skipBlank(src: string, start: number): number {
  let i = start;
  while (i < src.length) {
    const ch = src[i];
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f') {
      i++;
    } else if (ch === '\\' && src[i + 1] === '\n') {
      i += 2;
    } else if (ch === '\\' && src[i + 1] === '\r' && src[i + 2] === '\n') {
      i += 3;
    } else if (ch === '#') {
      const lineEnd = src.indexOf('\n', i);
      i = lineEnd < 0 ? src.length : lineEnd;
    } else {
      break;
    }
  }
  return i;
}

/** The tokens of `src`, ending with one `eof` token; throws `ConditionError` at the first thing Python would not read. */
export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  for (let i = skipBlank(src, 0); i < src.length;) {
    const token = readToken(src, i);
    tokens.push(token);
    i = skipBlank(src, token.pos + token.text.length);
  }
  tokens.push({ type: 'eof', pos: src.length, text: 'end of condition' });
  return tokens;
}
