/** Classification of driver errors, so callers map them to Frappe errors without reading SQL text. */
export interface PgErrorInfo {
  code: string;
  constraint?: string;
  table?: string;
  column?: string;
  schema?: string;
}

export function pgErrorInfo(e: unknown): PgErrorInfo | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  const pick = (k: string): string | undefined => {
    const v = (e as Record<string, unknown>)[k];
    return typeof v === 'string' ? v : undefined;
  };
  const info: PgErrorInfo = { code };
  const constraint = pick('constraint');
  const table = pick('table');
  const column = pick('column');
  const schema = pick('schema');
  if (constraint !== undefined) info.constraint = constraint;
  if (table !== undefined) info.table = table;
  if (column !== undefined) info.column = column;
  if (schema !== undefined) info.schema = schema;
  return info;
}

export const PG = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  notNullViolation: '23502',
  checkViolation: '23514',
  stringDataRightTruncation: '22001',
  numericValueOutOfRange: '22003',
  invalidTextRepresentation: '22P02',
  invalidDatetimeFormat: '22007',
  datetimeFieldOverflow: '22008',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  queryCanceled: '57014',
  cachedPlanChanged: '0A000',
  undefinedTable: '42P01',
  undefinedColumn: '42703',
  invalidCatalogName: '3D000',
  duplicateDatabase: '42P04',
  /** Ours: a write reached the sealed old copy of a tenant moved to another cluster (tenancy's move.ts). */
  tenantMoved: 'QM001',
} as const;

/** SQLSTATEs of a server that is going or gone: shutting down, starting up, or out of connections. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Socket errors of a server that cannot be reached (Node's `code`). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/** What pg and pg-pool say, with no code, when a connection cannot be made or was lost. */
const LOST_CONNECTION_RE = /^(?:timeout exceeded when trying to connect|Connection terminated\b|timeout expired$)/;

/**
 * Whether a statement failed because its database could not be reached (refused, timed out,
 * connection lost, server shutting down or out of connections) rather than for anything it asked:
 * the same statement may well succeed later, so it is answered as unavailable, not as a bug. Looks
 * through `cause` and AggregateError (Node's happy-eyeballs connect reports each address).
 */
export function isConnectionFailure(e: unknown, depth = 0): boolean {
  if (typeof e !== 'object' || e === null || depth > 3) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_STATES.has(code) || UNREACHABLE_CODES.has(code))) return true;
  if (e instanceof Error && LOST_CONNECTION_RE.test(e.message)) return true;
  if (e instanceof AggregateError && e.errors.some((inner) => isConnectionFailure(inner, depth + 1))) return true;
  return isConnectionFailure((e as { cause?: unknown }).cause, depth + 1);
}
