import { randomBytes } from 'node:crypto';
import { FrappeError, InternalServerError } from '@quire/errors';
import { pythonJsonDumps } from '@quire/frappe-compat';

/**
 * Frappe's v1 error body (frappe/utils/response.py::report_error): `exc_type`, `exception` (the
 * last traceback line), `exc` (a JSON string of traceback strings), `_server_messages` (a JSON
 * string of JSON strings). Unless in developer mode (Frappe's developer_mode) `exc` carries the
 * exception line only, never a stack, and an unexpected error says only "Internal Server Error";
 * the Python client (which raises only when `exc` is present) still sees the error.
 */
export interface ErrorEnvelope {
  status: number;
  body: Record<string, unknown>;
}

/** The error as Frappe names it, its exception line, and what may be shown of its traceback. */
function described(err: unknown, developerMode: boolean): { e: FrappeError; exception: string; trace: string } {
  const e = err instanceof FrappeError ? err : new InternalServerError(developerMode ? describe(err) : 'Internal Server Error');
  const exception = e.message ? `frappe.exceptions.${e.excType}: ${e.message}` : `frappe.exceptions.${e.excType}`;
  const trace = developerMode ? (err instanceof Error && err.stack) || exception : exception;
  return { e, exception, trace };
}

export function errorEnvelope(err: unknown, developerMode: boolean): ErrorEnvelope {
  const { e, exception, trace } = described(err, developerMode);
  const body: Record<string, unknown> = { exc_type: e.excType, exception, exc: pythonJsonDumps([trace]) };
  if (e.messages.length > 0) {
    const excId = randomBytes(10).toString('hex');
    body._server_messages = pythonJsonDumps(e.messages.map((m) => pythonJsonDumps(m.raise_exception ? { ...m, __frappe_exc_id: excId } : m)));
  }
  if (e.extra) Object.assign(body, e.extra);
  return { status: e.httpStatus, body };
}

/**
 * Frappe's v2 error body (report_error's v2 branch, _make_logs_v2): `errors`, one entry with the
 * exception's `type` merged with its own message (`message`, `title`, `indicator`), and its
 * traceback as `exception` (the exception line only outside developer mode; none for a 404, as Frappe's
 * allow_traceback leaves it out); other messages in `messages`, a real JSON array.
 */
export function errorEnvelopeV2(err: unknown, developerMode: boolean): ErrorEnvelope {
  const { e, trace } = described(err, developerMode);
  const entry: Record<string, unknown> = { type: e.excType };
  const own = e.messages.find((m) => m.raise_exception);
  if (own) Object.assign(entry, { message: own.message, title: own.title, indicator: own.indicator });
  if (e.httpStatus !== 404) entry.exception = trace;
  const body: Record<string, unknown> = { errors: [entry] };
  const others = e.messages.filter((m) => !m.raise_exception);
  if (others.length > 0) body.messages = others;
  if (e.extra) Object.assign(body, e.extra);
  return { status: e.httpStatus, body };
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
