/**
 * A safe evaluator for Frappe webhook conditions: a small subset of Python expressions over `doc`.
 *
 * The source is tokenised (`lexer`) and parsed into a tree once (`parser`; no `eval`, no `Function`);
 * evaluation (`evaluator`) walks the tree over plain data (`values`). Only own enumerable data properties of
 * plain objects and arrays are ever read (getters are never run, functions and class instances read as None),
 * names starting with `__` and `constructor`/`prototype` read as None, the only callable things are a fixed
 * list of builtins and `.get()` on dicts, and every resource is bounded (source length, tree size, nesting
 * depth, size of produced strings and lists). Errors while evaluating (division by zero, `1 + "a"`, …) make
 * the condition false instead of throwing.
 */
import { LRUCache } from 'lru-cache';
import { ConditionError, invalidCondition } from './error';
import { conditionHolds } from './evaluator';
import { tokenize } from './lexer';
import { parse } from './parser';

export { ConditionError } from './error';
export { MAX_CONDITION_DEPTH, MAX_CONDITION_NODES } from './parser';
export { MAX_VALUE_SIZE } from './values';

export interface ConditionScope {
  doc: Record<string, unknown>;
}

export type ConditionEvaluator = (scope: ConditionScope) => boolean;

export interface CompileConditionOptions {
  /** Called with the reason when an evaluation fails (the evaluator then returns false). */
  onError?: (error: ConditionError) => void;
}

export const MAX_CONDITION_LENGTH = 2000;

/**
 * Compiles a Frappe webhook condition. Throws `ConditionError` ("Invalid Condition: …") for syntax errors,
 * names other than `doc`, calls other than the builtins, or a condition over the size limits. An empty
 * (or whitespace-only) condition is always true. The evaluator never throws: failures evaluate to false.
 */
export function compileCondition(source: string, options: CompileConditionOptions = {}): ConditionEvaluator {
  if (typeof source !== 'string') invalidCondition('condition must be a string');
  if (source.length > MAX_CONDITION_LENGTH) invalidCondition(`condition is longer than ${MAX_CONDITION_LENGTH} characters`);
  const tokens = tokenize(source);
  if (tokens.length === 1) return () => true;
  const tree = parse(tokens);
  // `undefined` too: a JavaScript caller may pass nothing, and that must read as a missing doc, not throw.
  return (scope: ConditionScope | undefined): boolean => {
    try {
      return conditionHolds(tree, scope?.doc);
    } catch (err) {
      const error = err instanceof ConditionError ? err : new ConditionError(err instanceof RangeError ? 'condition is too complex to evaluate' : String(err));
      options.onError?.(error);
      return false;
    }
  };
}

/** Most distinct conditions `cachedCondition` keeps compiled; beyond that the least recently used is dropped. */
const CACHED_CONDITIONS = 1000;
const compiledConditions = new LRUCache<string, ConditionEvaluator>({ max: CACHED_CONDITIONS });

/**
 * `compileCondition(source)` for callers that test the same conditions again and again (e.g. every webhook on
 * every document change): the compiled test is kept per source text. Throws like `compileCondition`; a condition
 * that does not compile is not cached.
 */
export function cachedCondition(source: string): ConditionEvaluator {
  let test = compiledConditions.get(source);
  if (test === undefined) {
    test = compileCondition(source);
    compiledConditions.set(source, test);
  }
  return test;
}
