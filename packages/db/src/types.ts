/**
 * How column values come back from Postgres, pinned once for both drivers so that a row
 * read from the database is already in Frappe's wire format (frappe-wire.md §3.1).
 */

const OID = {
  int8: 20,
  numeric: 1700,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  json: 114,
  jsonb: 3802,
} as const;

/** Python's str(datetime): `YYYY-MM-DD HH:MM:SS[.ffffff]`, six fraction digits or none. */
export function normalizeTimestamp(text: string): string {
  const dot = text.indexOf('.');
  if (dot === -1) return text;
  const frac = text.slice(dot + 1);
  if (frac.length === 6) return text;
  if (/^0*$/.test(frac)) return text.slice(0, dot);
  return text.slice(0, dot + 1) + frac.padEnd(6, '0').slice(0, 6);
}

function parseInt8(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/** Parsers keyed by type OID; anything absent keeps the driver's text default. */
export const TYPE_PARSERS: Readonly<Record<number, (text: string) => unknown>> = {
  [OID.int8]: parseInt8,
  [OID.numeric]: Number,
  [OID.date]: (t) => t,
  [OID.time]: normalizeTimestamp,
  [OID.timestamp]: normalizeTimestamp,
  [OID.timestamptz]: (t) => t,
  // Frappe hands JSON fields to clients as the stored JSON text.
  [OID.json]: (t) => t,
  [OID.jsonb]: (t) => t,
};
