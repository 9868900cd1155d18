/** The tree the parser builds and the evaluator walks. */

export type CompareOp = '==' | '!=' | '<' | '>' | '<=' | '>=' | 'in' | 'not in' | 'is' | 'is not';
export type ArithOp = '+' | '-' | '*' | '/' | '//' | '%';

/** The only functions a condition may call (besides `.get()` on a dict). */
export const BUILTINS = ['len', 'str', 'int', 'float', 'abs', 'bool'] as const;
export type Builtin = (typeof BUILTINS)[number];

export type Node =
  | { k: 'const'; value: unknown }
  | { k: 'doc' }
  /** Lists and tuples alike. */
  | { k: 'list'; items: Node[] }
  | { k: 'attr'; obj: Node; name: string }
  | { k: 'index'; obj: Node; index: Node }
  | { k: 'call'; fn: Builtin; args: Node[] }
  /** `obj.get(key[, default])`. */
  | { k: 'get'; obj: Node; args: Node[] }
  | { k: 'not'; operand: Node }
  | { k: 'neg' | 'pos'; operand: Node }
  | { k: 'and' | 'or'; left: Node; right: Node }
  | { k: 'arith'; op: ArithOp; left: Node; right: Node }
  /** A chain such as `a < b <= c`: `first ops[0] rest[0] ops[1] rest[1] …`. */
  | { k: 'compare'; first: Node; ops: CompareOp[]; rest: Node[] }
  | { k: 'ifelse'; test: Node; then: Node; else: Node };
