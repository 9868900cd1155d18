import type { DocContext, FileStore, JobEnqueueing } from '@quire/documents';
import type { RateLimitRule } from '@quire/limits';
import type { ZodType } from 'zod';

export type { FileStore };

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
  /**
   * Callable with an OAuth token whose scopes are limited (no `all`): the method checks DocType
   * permissions itself (which apply the token's scopes) or reveals only the caller's identity.
   * Other methods refuse such tokens with 403.
   */
  allowScopedTokens?: boolean;
  /**
   * The method's arguments, as a zod schema of an object: each call's arguments are checked (and
   * coerced) by it before the method runs (a mismatch answers 417), and the tenant's OpenAPI
   * description shows them. Without it any arguments pass and the description is generic.
   */
  args?: ZodType<MethodArgs>;
  /**
   * Limits on calls (Frappe's `@rate_limit`), checked in order before the method runs, counted
   * across every process; a call over one is answered 429 with `Retry-After`. For what a stranger
   * may call that sends email or costs real work.
   */
  rateLimit?: readonly RateLimitRule[];
  /** What the method answers (`message`), for the OpenAPI description. */
  returns?: ZodType;
  /** One line saying what the method does, for the OpenAPI description. */
  summary?: string;
}

/** A file part of a multipart request. */
export interface UploadedFile {
  fieldname: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

/** The parts of the HTTP request a method may look at. */
export interface MethodRequest {
  /** The client's address (X-Forwarded-For is honoured only behind a configured proxy). */
  ip: string;
  /** Lower-cased header names. */
  headers: Readonly<Record<string, string | undefined>>;
  /** Files of a multipart request. */
  files: readonly UploadedFile[];
  /** The cookie session the request came with, if any (its id as the client sent it). */
  sessionId: string | undefined;
}

export interface CookieOptions {
  httpOnly?: boolean;
  /** Seconds; omitted for a browser-session cookie. */
  maxAge?: number;
  sameSite?: 'Lax' | 'Strict' | 'None';
}

/** What a method may add to its response besides its return value (Frappe's frappe.local.response). */
export interface MethodResponse {
  /** A top-level key of the JSON body next to `message` (e.g. `home_page`, `full_name`). */
  set(key: string, value: unknown): void;
  setCookie(name: string, value: string, options?: CookieOptions): void;
  clearCookie(name: string): void;
  status(code: number): void;
  /** frappe.msgprint: a message for the user, sent in `_server_messages`. */
  msgprint(message: string, title?: string): void;
  /**
   * Answers with a file to download instead of JSON (Frappe's `frappe.response.type = "binary"`,
   * e.g. an export): the return value is then ignored.
   */
  download(file: DownloadFile): void;
}

/** A file a method answers with (`Content-Disposition: attachment`). */
export interface DownloadFile {
  filename: string;
  contentType: string;
  content: Buffer | string;
}

/** What a method receives besides its arguments; `enqueue` and `enqueueDoc` are frappe.enqueue and enqueue_doc. */
export interface MethodContext extends JobEnqueueing {
  doc: DocContext;
  /**
   * The tenant's own URL, for links sent outside the request (emails): its `host_name` setting, else
   * its primary host with the deployment's public scheme and port (Frappe's get_url()). Never taken
   * from the request's Host, which its sender chooses.
   */
  siteUrl: string;
  /** The HTTP verb of the call. */
  verb: string;
  settings: MethodSettings;
  request: MethodRequest;
  response: MethodResponse;
}

export interface MethodSettings {
  maxPageLength: number;
  /** Seconds a login session lasts without activity (Frappe's session_expiry, 170 h by default). */
  sessionExpirySeconds: number;
  /** Largest upload accepted by upload_file, in bytes. */
  maxFileSize: number;
  /** The platform's mail server (SMTP_URL) for tenants without an outgoing Email Account; set where email is sent (workers). */
  defaultSmtpUrl?: string | undefined;
}

export type MethodArgs = Record<string, unknown>;
export type MethodFunction = (args: MethodArgs, ctx: MethodContext) => unknown;

export interface WhitelistedMethod {
  readonly fn: MethodFunction;
  readonly methods: ReadonlySet<string>;
  readonly allowGuest: boolean;
  readonly allowScopedTokens: boolean;
  readonly args: ZodType<MethodArgs> | undefined;
  readonly rateLimit: readonly RateLimitRule[];
  readonly returns: ZodType | undefined;
  readonly summary: string | undefined;
}

const MARK = Symbol.for('quire.whitelisted');
const DEFAULT_VERBS: readonly HttpVerb[] = ['GET', 'POST', 'PUT', 'DELETE'];

type Marked = MethodFunction & { [MARK]?: WhitelistedMethod };

export function whitelist<F extends MethodFunction>(fn: F, options: WhitelistOptions = {}): F {
  (fn as Marked)[MARK] = {
    fn,
    methods: new Set(options.methods ?? DEFAULT_VERBS),
    allowGuest: options.allowGuest ?? false,
    allowScopedTokens: options.allowScopedTokens ?? false,
    args: options.args,
    rateLimit: options.rateLimit ?? [],
    returns: options.returns,
    summary: options.summary,
  };
  return fn;
}

export function whitelistedOf(value: unknown): WhitelistedMethod | undefined {
  return typeof value === 'function' ? (value as Marked)[MARK] : undefined;
}

// ---- document methods (run_method) ----

/** A method of a document (Frappe's whitelisted Document methods), called as `run_method`. */
export type DocMethodFunction = (doc: import('@quire/documents').DocData, args: MethodArgs, ctx: MethodContext) => unknown;

export interface WhitelistedDocMethod {
  readonly fn: DocMethodFunction;
  /** POST runs with write permission in a transaction; GET only reads (Frappe's execute_doc_method). */
  readonly methods: ReadonlySet<string>;
}

/**
 * Marks a document method callable through `/api/resource/<DocType>/<name>` with `run_method`.
 * Export them from a DocType's module as `export const methods = { name: whitelistDocMethod(fn) }`;
 * `documentMethods` exported by any module apply to every DocType (submit, cancel, …).
 */
export function whitelistDocMethod(fn: DocMethodFunction, options: { methods?: readonly HttpVerb[] } = {}): WhitelistedDocMethod {
  return { fn, methods: new Set(options.methods ?? DEFAULT_VERBS) };
}

export function isDocMethod(value: unknown): value is WhitelistedDocMethod {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as WhitelistedDocMethod).fn === 'function' &&
    (value as WhitelistedDocMethod).methods instanceof Set
  );
}
