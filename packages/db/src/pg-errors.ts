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
} as const;
