import { SESSION_COOKIES } from '@quire/auth';
import { isConnectionFailure } from '@quire/db';
import { DoesNotExistError, FrappeError, SessionStopped, ValidationError } from '@quire/errors';
import { isMovedWrite } from '@quire/tenancy';
import { clearCookie } from '@quire/http';
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { ZodError } from 'zod';
import { errorEnvelope, errorEnvelopeV2 } from '../http/envelope';
import { sendJson } from '../http/respond';

/**
 * The one place errors become responses: Frappe's envelope with Frappe's status. Client mistakes
 * are logged at debug; anything unexpected at error, with its stack, and answered 500 without
 * details unless in developer mode.
 */
export function errorHandler({ developerMode, logger }: { developerMode: boolean; logger: Logger }): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const mapped = classify(err);
    const { status, body } = (res.locals.apiVersion === 'v2' ? errorEnvelopeV2 : errorEnvelope)(mapped, developerMode);
    // An error can come before the tenant or the caller is known.
    const locals: Partial<Express.Locals> = res.locals;
    const log = { requestId: locals.requestId, tenant: locals.tenant?.name, user: locals.principal?.user, method: req.method, path: req.path };
    if (status >= 500) logger.error({ ...log, err }, 'request failed');
    else logger.debug({ ...log, status, exc_type: mapped instanceof FrappeError ? mapped.excType : undefined }, 'request refused');
    if (res.headersSent) {
      res.end();
      return;
    }
    // Frappe's handle_exception: a failed authentication also clears the session cookies.
    if (mapped instanceof FrappeError && mapped.excType === 'AuthenticationError') for (const name of SESSION_COOKIES) clearCookie(req, res, name);
    if (mapped instanceof FrappeError && mapped.headers) for (const [name, value] of Object.entries(mapped.headers)) res.setHeader(name, value);
    sendJson(res, status, body);
  };
}

const UNREACHABLE = { title: 'Database Unavailable', headers: { 'Retry-After': '5' } } as const;

function classify(err: unknown): unknown {
  if (err instanceof FrappeError) return err;
  if (err instanceof ZodError) return new ValidationError(err.issues[0]?.message ?? 'Invalid request', { title: 'Invalid Request' });
  // express' router: a path segment that does not percent-decode
  if (err instanceof URIError || (err as { status?: unknown }).status === 400) return new DoesNotExistError('', { silent: true });
  // A write that reached a moved tenant's old copy (this process had not heard of the move yet): nothing was written.
  if (isMovedWrite(err))
    return new SessionStopped('This site just moved to another database: try again', { title: 'Site Moved', headers: { 'Retry-After': '1' } });
  // Its database (the tenant's cluster) could not be reached: the request may succeed later, so 503
  // rather than a 500 that says nothing of it; the driver's message (host, port) stays in the log.
  if (isConnectionFailure(err)) return new SessionStopped('The database of this site cannot be reached: try again shortly', UNREACHABLE);
  return err;
}
