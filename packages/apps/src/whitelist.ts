import type { DocContext } from '@quire/documents';

/**
 * Whitelisting (frappe.whitelist): a function is callable over /api/method only when its module
 * marks it here. The dotted path is the app name, the module path and the export name.
 */

export type HttpVerb = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD';

export interface WhitelistOptions {
  /** Verbs the method answers to; Frappe's default is GET, POST, PUT and DELETE. */
  methods?: readonly HttpVerb[];
  /** Callable without credentials. */
  allowGuest?: boolean;
}

/** What a method receives besides its arguments. */
export interface MethodContext {
  doc: DocContext;
  /** The HTTP verb of the call. */
  verb: string;
  /** Server settings methods need (e.g. the list page cap). */
  settings: MethodSettings;
}

export interface MethodSettings {
  maxPageLength: number;
}

export type MethodArgs = Record<string, unknown>;
export type MethodFunction = (args: MethodArgs, ctx: MethodContext) => unknown;

export interface WhitelistedMethod {
  readonly fn: MethodFunction;
  readonly methods: ReadonlySet<string>;
  readonly allowGuest: boolean;
}

const MARK = Symbol.for('quire.whitelisted');
const DEFAULT_VERBS: readonly HttpVerb[] = ['GET', 'POST', 'PUT', 'DELETE'];

type Marked = MethodFunction & { [MARK]?: WhitelistedMethod };

export function whitelist<F extends MethodFunction>(fn: F, options: WhitelistOptions = {}): F {
  (fn as Marked)[MARK] = {
    fn,
    methods: new Set(options.methods ?? DEFAULT_VERBS),
    allowGuest: options.allowGuest ?? false,
  };
  return fn;
}

export function whitelistedOf(value: unknown): WhitelistedMethod | undefined {
  return typeof value === 'function' ? (value as Marked)[MARK] : undefined;
}
