import { randomBytes } from 'node:crypto';
import { FrappeError, InternalServerError } from '@quire/errors';
import { pythonJsonDumps } from '@quire/frappe-compat';

/**
 * Frappe's v1 error body (frappe/utils/response.py::report_error): `exc_type`, `exception` (the
 * last traceback line), `exc` (a JSON string of traceback strings), `_server_messages` (a JSON
 * string of JSON strings). In production `exc` carries the exception line only, never a stack,
 * so the Python client (which raises only when `exc` is present) still sees the error.
 */
export interface ErrorEnvelope {
  status: number;
  body: Record<string, unknown>;
}

export function errorEnvelope(err: unknown, production: boolean): ErrorEnvelope {
  const e = err instanceof FrappeError ? err : new InternalServerError(production ? 'Internal Server Error' : describe(err));
  const exception = e.message ? `frappe.exceptions.${e.excType}: ${e.message}` : `frappe.exceptions.${e.excType}`;
  const trace = production ? exception : (err instanceof Error && err.stack) || exception;
  const body: Record<string, unknown> = { exc_type: e.excType, exception, exc: pythonJsonDumps([trace]) };
  if (e.messages.length > 0) {
    const excId = randomBytes(10).toString('hex');
    body._server_messages = pythonJsonDumps(e.messages.map((m) => pythonJsonDumps(m.raise_exception ? { ...m, __frappe_exc_id: excId } : m)));
  }
  if (e.extra) Object.assign(body, e.extra);
  return { status: e.httpStatus, body };
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
