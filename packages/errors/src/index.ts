/**
 * Frappe's exception types: an `exc_type` and the HTTP status Frappe answers with
 * (frappe/exceptions.py). Nothing else lives here; rendering is the HTTP layer's job.
 */

/** One entry of `_server_messages` (frappe.msgprint's dict). */
export interface ServerMessage {
  message: string;
  title?: string;
  indicator?: string;
  raise_exception?: 1;
}

export interface FrappeErrorOptions {
  /** Extra entries for `_server_messages` besides the error's own message. */
  messages?: ServerMessage[];
  title?: string;
  /** Top-level keys Frappe adds to the error body (e.g. `message` on a failed login). */
  extra?: Record<string, unknown>;
  /** Set when the message must not become a server message (bare `raise PermissionError`). */
  silent?: boolean;
  /** Response headers the error's answer carries (e.g. `Retry-After` on a 429). */
  headers?: Readonly<Record<string, string>>;
  cause?: unknown;
}

export class FrappeError extends Error {
  /** The class name Frappe reports as `exc_type`. */
  static readonly excType: string = 'Exception';
  static readonly httpStatus: number = 500;

  readonly messages: ServerMessage[];
  readonly title: string | undefined;
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(message = '', options: FrappeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.title = options.title;
    this.extra = options.extra;
    this.headers = options.headers;
    const own: ServerMessage[] = message && !options.silent ? [{ message, title: options.title ?? 'Message', indicator: 'red', raise_exception: 1 }] : [];
    this.messages = [...own, ...(options.messages ?? [])];
  }

  get excType(): string {
    return (this.constructor as typeof FrappeError).excType;
  }

  get httpStatus(): number {
    return (this.constructor as typeof FrappeError).httpStatus;
  }

  override get name(): string {
    return this.excType;
  }
}

type ErrorClass = typeof FrappeError;

function define(excType: string, httpStatus: number, Base: ErrorClass = FrappeError): ErrorClass {
  const cls = class extends Base {
    static override readonly excType = excType;
    static override readonly httpStatus = httpStatus;
  };
  Object.defineProperty(cls, 'name', { value: excType });
  return cls;
}

export const ValidationError = define('ValidationError', 417);
export const AuthenticationError = define('AuthenticationError', 401);
export const SessionExpired = define('SessionExpired', 401);
export const PermissionError = define('PermissionError', 403);
export const DoesNotExistError = define('DoesNotExistError', 404, ValidationError);
export const NameError = define('NameError', 409);
export const DuplicateEntryError = define('DuplicateEntryError', 409, NameError);
export const CSRFTokenError = define('CSRFTokenError', 400);
export const InvalidAuthorizationToken = define('InvalidAuthorizationToken', 400, CSRFTokenError);
export const TooManyRequestsError = define('TooManyRequestsError', 429);
export const SessionStopped = define('SessionStopped', 503);
/** No way to send an email: no outgoing Email Account or mail server, or one that cannot be used (Frappe's, 501). */
export const OutgoingEmailError = define('OutgoingEmailError', 501);
export const UnsupportedMediaType = define('UnsupportedMediaType', 415);
export const RequestEntityTooLarge = define('RequestEntityTooLarge', 413);
export const FrappeTypeError = define('FrappeTypeError', 417);

// ValidationError family (all 417)
export const MandatoryError = define('MandatoryError', 417, ValidationError);
export const LinkValidationError = define('LinkValidationError', 417, ValidationError);
export const CancelledLinkError = define('CancelledLinkError', 417, LinkValidationError);
export const TimestampMismatchError = define('TimestampMismatchError', 417, ValidationError);
export const DocstatusTransitionError = define('DocstatusTransitionError', 417, ValidationError);
export const UpdateAfterSubmitError = define('UpdateAfterSubmitError', 417, ValidationError);
export const CannotChangeConstantError = define('CannotChangeConstantError', 417, ValidationError);
export const CharacterLengthExceededError = define('CharacterLengthExceededError', 417, ValidationError);
export const UniqueValidationError = define('UniqueValidationError', 417, ValidationError);
export const DataError = define('DataError', 417, ValidationError);
export const LinkExistsError = define('LinkExistsError', 417, ValidationError);
export const NonNegativeError = define('NonNegativeError', 417, ValidationError);
export const InvalidEmailAddressError = define('InvalidEmailAddressError', 417, ValidationError);
export const InvalidNameError = define('InvalidNameError', 417, ValidationError);
export const InvalidPhoneNumberError = define('InvalidPhoneNumberError', 417, ValidationError);
export const InvalidURL = define('InvalidURL', 417, ValidationError);
export const InvalidNamingSeriesError = define('InvalidNamingSeriesError', 417, ValidationError);
export const InvalidUUIDValue = define('InvalidUUIDValue', 417, ValidationError);
export const InvalidColumnName = define('InvalidColumnName', 417, ValidationError);
export const DataTooLongException = define('DataTooLongException', 417, ValidationError);
export const InReadOnlyMode = define('InReadOnlyMode', 503, ValidationError);
/** A method's own limit (Frappe's `@rate_limit`), as opposed to the site's request-time budget (TooManyRequestsError). */
export const RateLimitExceededError = define('RateLimitExceededError', 429, ValidationError);
/** A tenant's plan allows no more of something (database size, file storage, users): Quire's, a ValidationError as Frappe's limits were. */
export const QuotaExceededError = define('QuotaExceededError', 417, ValidationError);
/** A statement cut short by the tenant's plan's statement timeout: Frappe's QueryTimeoutError (500 on its JSON path). */
export const QueryTimeoutError = define('QueryTimeoutError', 500);

/** Anything that is not a FrappeError: Frappe reports the Python class; we report a generic one. */
export const InternalServerError = define('Exception', 500);

export function isFrappeError(e: unknown): e is FrappeError {
  return e instanceof FrappeError;
}

/** Frappe's v1 list/permission wording, kept in one place. */
export function notPermitted(ptype: string, doctype: string, name?: string): FrappeError {
  const target = name ? `<strong>${doctype}</strong> ${name}` : `<strong>${doctype}</strong>`;
  return new PermissionError(`You need the '${ptype}' permission on ${target} to perform this action.`, {
    title: 'Insufficient Permission',
    extra: { _error_message: `No permission for ${doctype}` },
  });
}

export function doesNotExist(doctype: string, name: string): FrappeError {
  return new DoesNotExistError(`${doctype} ${name} not found`, { title: 'Not Found' });
}

/** werkzeug's PreconditionFailed: an `If-Match` that no longer matches the document (RFC 9110 §13.1.1). */
export const PreconditionFailed = define('PreconditionFailed', 412);

/** werkzeug's MethodNotAllowed: a route exists but not for this verb. */
export const MethodNotAllowed = define('MethodNotAllowed', 405);
