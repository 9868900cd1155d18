/** Tree + document -> value, with Python's semantics (short-circuit `and`/`or` return an operand, comparison chains, …). */
import { pyBool } from '@quire/frappe-compat';
import type { Node } from './ast';
import { callBuiltin } from './builtins';
import { evaluationFailed } from './error';
import { arithmetic, compare } from './operators';
import { asNumber, fromHost, isDict, MISSING, ownValue, readAttribute, readIndex, safeKey, typeName } from './values';

function evaluate(node: Node, doc: unknown): unknown {
  switch (node.k) {
    case 'const':
      return node.value;
    case 'doc':
      return doc;
    case 'list':
      return node.items.map((n) => evaluate(n, doc));
    case 'attr':
      return readAttribute(evaluate(node.obj, doc), node.name);
    case 'index':
      return readIndex(evaluate(node.obj, doc), evaluate(node.index, doc));
    case 'call':
      return callBuiltin(
        node.fn,
        node.args.map((n) => evaluate(n, doc)),
      );
    case 'get': {
      const obj = evaluate(node.obj, doc);
      const key = evaluate(node.args[0] as Node, doc);
      const fallback = node.args[1] === undefined ? null : evaluate(node.args[1], doc);
      if (!isDict(obj)) return evaluationFailed(`'${typeName(obj)}' object has no attribute 'get'`);
      const found = typeof key === 'string' && safeKey(key) ? ownValue(obj, key) : MISSING;
      return found === MISSING ? fallback : found;
    }
    case 'not':
      return !pyBool(evaluate(node.operand, doc));
    case 'neg':
    case 'pos': {
      const v = evaluate(node.operand, doc);
      const n = asNumber(v);
      if (n === undefined) evaluationFailed(`bad operand type for unary ${node.k === 'neg' ? '-' : '+'}: '${typeName(v)}'`);
      return node.k === 'neg' ? -n : n;
    }
    case 'and': {
      const left = evaluate(node.left, doc);
      return pyBool(left) ? evaluate(node.right, doc) : left;
    }
    case 'or': {
      const left = evaluate(node.left, doc);
      return pyBool(left) ? left : evaluate(node.right, doc);
    }
    case 'arith':
      return arithmetic(node.op, evaluate(node.left, doc), evaluate(node.right, doc));
    case 'compare': {
      let left = evaluate(node.first, doc);
      for (const [i, op] of node.ops.entries()) {
        const right = evaluate(node.rest[i] as Node, doc);
        if (!compare(op, left, right)) return false;
        left = right;
      }
      return true;
    }
    case 'ifelse':
      return pyBool(evaluate(node.test, doc)) ? evaluate(node.then, doc) : evaluate(node.else, doc);
  }
}

/**
 * Whether a parsed condition holds for `doc`: Python's truthiness of its value. Throws `ConditionError` where
 * Python would raise, and lets a `RangeError` through when the data is too deep for the stack.
 */
export function conditionHolds(tree: Node, doc: unknown): boolean {
  return pyBool(evaluate(tree, fromHost(doc)));
}
