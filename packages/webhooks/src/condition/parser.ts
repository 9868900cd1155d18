/**
 * Tokens -> tree for the Python expression subset a condition may use: `x if c else y`, `or`/`and`/`not`,
 * comparison chains, `+ - * / // %`, unary `-`/`+`, attributes, indexing, the builtins, `.get()`, list and
 * tuple displays and literals. Everything else Python has is refused with a message that names it, and the
 * tree is bounded in size and depth so a hostile condition cannot exhaust the stack or memory.
 */
import { BUILTINS, type ArithOp, type Builtin, type CompareOp, type Node } from './ast';
import { invalidCondition } from './error';
import { describeToken, type Token } from './lexer';

export const MAX_CONDITION_NODES = 500;
export const MAX_CONDITION_DEPTH = 50;

// prettier-ignore
const PYTHON_KEYWORDS = new Set([
  'lambda', 'for', 'while', 'def', 'class', 'import', 'from', 'as', 'with', 'yield', 'await', 'async', 'return',
  'del', 'global', 'nonlocal', 'assert', 'raise', 'try', 'except', 'finally', 'pass', 'break', 'continue', 'elif',
]);
/** Keywords of the grammar below; met where a value should start, they are out of place. */
const OPERATOR_KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'if', 'else']);
/** Python's constants, and their JSON spellings `true`/`false`/`null`. */
// prettier-ignore
const CONSTANTS: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ['True', true], ['False', false], ['None', null], ['true', true], ['false', false], ['null', null],
]);
const COMPARISON_SYMBOLS = new Set(['==', '!=', '<', '>', '<=', '>=']);
const ADDITIVE_OPERATORS: readonly ArithOp[] = ['+', '-'];
const MULTIPLICATIVE_OPERATORS: readonly ArithOp[] = ['*', '/', '//', '%'];

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
      invalidCondition(`expected "${value}" but found ${describeToken(tok)}`, tok.pos);
    }
    this.next();
  }
  /** Refuses what stands at the current token. */
  private refuse(message: string): never {
    return invalidCondition(message, this.peek().pos);
  }
  private unexpected(tok: Token): never {
    if (tok.type === 'name' && PYTHON_KEYWORDS.has(tok.value)) invalidCondition(`"${tok.value}" is not supported`, tok.pos);
    if (tok.type === 'op' && tok.value === ':=') invalidCondition('assignment expressions (":=") are not supported', tok.pos);
    if (tok.type === 'eof') invalidCondition('unexpected end of condition', tok.pos);
    return invalidCondition(`unexpected token ${describeToken(tok)}`, tok.pos);
  }
  /** Counts a new node against `MAX_CONDITION_NODES`. */
  private node<N extends Node>(n: N, at: number): N {
    if (++this.nodes > MAX_CONDITION_NODES) {
      invalidCondition(`condition is too complex (more than ${MAX_CONDITION_NODES} parts)`, at);
    }
    return n;
  }
  /** Parses one level deeper, against `MAX_CONDITION_DEPTH` (only rules that can recurse without consuming a bracket need it). */
  private nested<T>(at: number, parse: () => T): T {
    if (++this.depth > MAX_CONDITION_DEPTH) invalidCondition(`condition is nested too deeply`, at);
    const result = parse();
    this.depth--;
    return result;
  }

  /** expr := or_expr ['if' or_expr 'else' expr] */
  private expr(): Node {
    const at = this.peek().pos;
    return this.nested(at, () => {
      const value = this.orExpr();
      if (!this.isName('if')) return value;
      this.next();
      const test = this.orExpr();
      if (!this.isName('else')) this.refuse(`expected "else" but found ${describeToken(this.peek())}`);
      this.next();
      return this.node({ k: 'ifelse', test, then: value, else: this.expr() }, at);
    });
  }

  /** or_expr := and_expr ('or' and_expr)* */
  private orExpr(): Node {
    return this.booleanChain('or', () => this.andExpr());
  }

  /** and_expr := not_expr ('and' not_expr)* */
  private andExpr(): Node {
    return this.booleanChain('and', () => this.notExpr());
  }

  private booleanChain(keyword: 'and' | 'or', operand: () => Node): Node {
    let left = operand();
    while (this.isName(keyword)) {
      const at = this.next().pos;
      left = this.node({ k: keyword, left, right: operand() }, at);
    }
    return left;
  }

  /** not_expr := 'not' not_expr | comparison */
  private notExpr(): Node {
    if (!this.isName('not')) return this.comparison();
    const at = this.next().pos;
    const operand = this.nested(at, () => this.notExpr());
    return this.node({ k: 'not', operand }, at);
  }

  private compareOp(): CompareOp | undefined {
    const tok = this.peek();
    if (tok.type === 'op' && COMPARISON_SYMBOLS.has(tok.value)) return tok.value as CompareOp;
    if (tok.type === 'op' && tok.value === '<>') this.refuse('"<>" is not supported, use "!="');
    if (this.isName('in')) return 'in';
    if (this.isName('not') && this.isName('in', 1)) return 'not in';
    if (this.isName('is')) return this.isName('not', 1) ? 'is not' : 'is';
    return undefined;
  }

  /** comparison := arith (compare_op arith)* */
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

  /** arith := term (('+' | '-') term)* */
  private arith(): Node {
    return this.arithChain(ADDITIVE_OPERATORS, () => this.term());
  }

  /** term := unary (('*' | '/' | '//' | '%') unary)* */
  private term(): Node {
    return this.arithChain(MULTIPLICATIVE_OPERATORS, () => this.unary());
  }

  private arithChain(operators: readonly ArithOp[], operand: () => Node): Node {
    let left = operand();
    for (let tok = this.peek(); tok.type === 'op' && operators.includes(tok.value as ArithOp); tok = this.peek()) {
      this.next();
      left = this.node({ k: 'arith', op: tok.value as ArithOp, left, right: operand() }, tok.pos);
    }
    return left;
  }

  /** unary := ('-' | '+') unary | postfix */
  private unary(): Node {
    if (!this.isOp('-') && !this.isOp('+')) return this.postfix();
    const tok = this.next();
    const operand = this.nested(tok.pos, () => this.unary());
    return this.node({ k: tok.text === '-' ? 'neg' : 'pos', operand }, tok.pos);
  }

  /** postfix := (builtin | atom) (call | '.' name | '[' expr ']')* */
  private postfix(): Node {
    const startTok = this.peek();
    let builtin: Builtin | undefined;
    let node: Node | undefined;
    if (startTok.type === 'name' && (BUILTINS as readonly string[]).includes(startTok.value)) {
      this.next();
      builtin = startTok.value as Builtin;
      if (!this.isOp('(')) invalidCondition(`"${builtin}" must be called`, startTok.pos);
    } else {
      node = this.atom();
    }
    for (;;) {
      const tok = this.peek();
      if (tok.type !== 'op') break;
      if (tok.value === '(') {
        this.next();
        node = this.call(builtin, node, this.callArgs(), tok.pos);
        builtin = undefined;
      } else if (tok.value === '.') {
        this.next();
        const name = this.next();
        if (name.type !== 'name') invalidCondition(`expected an attribute name after "." but found ${describeToken(name)}`, name.pos);
        node = this.node({ k: 'attr', obj: node as Node, name: name.value }, name.pos);
      } else if (tok.value === '[') {
        this.next();
        const index = this.expr();
        if (this.isOp(':')) this.refuse('slices are not supported');
        this.expectOp(']');
        node = this.node({ k: 'index', obj: node as Node, index }, tok.pos);
      } else break;
    }
    return node as Node;
  }

  /** A call of a builtin, or of `.get` on a value; nothing else may be called. */
  private call(builtin: Builtin | undefined, callee: Node | undefined, args: Node[], at: number): Node {
    if (builtin !== undefined) {
      const min = builtin === 'len' || builtin === 'abs' ? 1 : 0;
      if (args.length < min || args.length > 1) invalidCondition(`${builtin}() takes exactly one argument (${args.length} given)`, at);
      return this.node({ k: 'call', fn: builtin, args }, at);
    }
    if (callee?.k === 'attr' && callee.name === 'get') {
      if (args.length < 1 || args.length > 2) invalidCondition(`get() takes 1 or 2 arguments (${args.length} given)`, at);
      return this.node({ k: 'get', obj: callee.obj, args }, at);
    }
    const what = callee?.k === 'attr' ? `"${callee.name}"` : 'this value';
    return invalidCondition(`calling ${what} is not allowed (only ${BUILTINS.join(', ')} and .get())`, at);
  }

  private callArgs(): Node[] {
    return this.commaSeparated(')', {
      beforeItem: () => {
        if (this.isOp('*') || this.isOp('**')) this.refuse('argument unpacking is not supported');
        if (this.peek().type === 'name' && this.isOp('=', 1)) this.refuse('keyword arguments are not supported');
      },
    }).items;
  }

  /** The items of a list or tuple display up to `close`. */
  private displayItems(close: ')' | ']'): { items: Node[]; comma: boolean } {
    return this.commaSeparated(close, {
      beforeItem: () => {
        if (this.isOp('*')) this.refuse('unpacking is not supported');
      },
      afterItem: () => {
        if (this.isOp(':=')) this.refuse('assignment expressions (":=") are not supported');
      },
    });
  }

  /**
   * Comma-separated expressions up to and including `close`, with checks for what Python would allow there but we
   * do not; `comma` tells whether a comma was seen (what makes `(x,)` a tuple).
   */
  private commaSeparated(close: string, refuse: { beforeItem: () => void; afterItem?: () => void }): { items: Node[]; comma: boolean } {
    const items: Node[] = [];
    let comma = false;
    while (!this.isOp(close)) {
      refuse.beforeItem();
      items.push(this.expr());
      if (this.isName('for')) this.refuse('comprehensions are not supported');
      refuse.afterItem?.();
      if (!this.isOp(',')) break;
      comma = true;
      this.next();
    }
    this.expectOp(close);
    return { items, comma };
  }

  private atom(): Node {
    const tok = this.next();
    switch (tok.type) {
      case 'num':
        return this.node({ k: 'const', value: tok.value }, tok.pos);
      case 'str': {
        let value = tok.value;
        for (let more = this.peek(); more.type === 'str'; more = this.peek()) {
          value += more.value; // "a" "b" is "ab"
          this.next();
        }
        return this.node({ k: 'const', value }, tok.pos);
      }
      case 'name': {
        if (CONSTANTS.has(tok.value)) return this.node({ k: 'const', value: CONSTANTS.get(tok.value) }, tok.pos);
        if (tok.value === 'doc') return this.node({ k: 'doc' }, tok.pos);
        if (PYTHON_KEYWORDS.has(tok.value) || OPERATOR_KEYWORDS.has(tok.value)) this.unexpected(tok);
        return invalidCondition(`name "${tok.value}" is not allowed (only "doc" can be used)`, tok.pos);
      }
      case 'op': {
        if (tok.value === '(') {
          const { items, comma } = this.displayItems(')');
          if (items.length === 1 && !comma) return items[0] as Node;
          return this.node({ k: 'list', items }, tok.pos); // tuples behave as lists
        }
        if (tok.value === '[') return this.node({ k: 'list', items: this.displayItems(']').items }, tok.pos);
        if (tok.value === '{') invalidCondition('dict and set literals are not supported', tok.pos);
        return this.unexpected(tok);
      }
      case 'eof':
        return this.unexpected(tok);
    }
  }
}

/** The tree of a tokenised condition; throws `ConditionError` for anything outside the subset or over the limits. */
export function parse(tokens: Token[]): Node {
  return new Parser(tokens).parse();
}
