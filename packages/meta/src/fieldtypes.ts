/**
 * The fieldtype table (frappe-wire.md §6.3): for each Frappe fieldtype, its Postgres column,
 * how client values are coerced into the stored form, and how it behaves in filters.
 */

/** How a fieldtype's values behave; every fieldtype maps to exactly one kind. */
export type ValueKind =
  | 'text' // varchar / text
  | 'int' // bigint, NOT NULL DEFAULT
  | 'float' // numeric, NOT NULL DEFAULT
  | 'check' // smallint 0/1, NOT NULL DEFAULT
  | 'date'
  | 'datetime'
  | 'time'
  | 'json'
  | 'table' // rows in a child table
  | 'none'; // layout only: no value, no column

export interface FieldTypeSpec {
  kind: ValueKind;
  /** Postgres column type, given the field's `length`; undefined when the fieldtype has no column. */
  column?: (length: number | undefined) => string;
  /** Numeric columns are NOT NULL with a default (Frappe: cint/flt of the default). */
  notNull?: boolean;
  /** varchar fields: values longer than the column raise CharacterLengthExceededError. */
  varchar?: boolean;
}

export const VARCHAR_LEN = 140;

const varchar = (length: number | undefined) => `varchar(${length && length > 0 ? length : VARCHAR_LEN})`;
const text = () => 'text';
const decimal = () => 'numeric(21,9)';

const VARCHAR: FieldTypeSpec = { kind: 'text', column: varchar, varchar: true };
const TEXT: FieldTypeSpec = { kind: 'text', column: text };
const LAYOUT: FieldTypeSpec = { kind: 'none' };

export const FIELD_TYPES = {
  Data: VARCHAR,
  Link: VARCHAR,
  'Dynamic Link': VARCHAR,
  Select: VARCHAR,
  'Read Only': VARCHAR,
  Color: VARCHAR,
  Icon: VARCHAR,
  Phone: VARCHAR,
  Autocomplete: VARCHAR,
  Int: { kind: 'int', column: () => 'bigint', notNull: true },
  'Long Int': { kind: 'int', column: () => 'bigint', notNull: true },
  Check: { kind: 'check', column: () => 'smallint', notNull: true },
  Currency: { kind: 'float', column: decimal, notNull: true },
  Float: { kind: 'float', column: decimal, notNull: true },
  Percent: { kind: 'float', column: decimal, notNull: true },
  Duration: { kind: 'float', column: decimal },
  Rating: { kind: 'float', column: () => 'numeric(3,2)', notNull: true },
  Date: { kind: 'date', column: () => 'date' },
  Datetime: { kind: 'datetime', column: () => 'timestamp(6)' },
  Time: { kind: 'time', column: () => 'time(6)' },
  'Small Text': TEXT,
  Text: TEXT,
  Password: TEXT,
  Attach: TEXT,
  'Attach Image': TEXT,
  'Long Text': TEXT,
  Code: TEXT,
  'Text Editor': TEXT,
  'Markdown Editor': TEXT,
  'HTML Editor': TEXT,
  Signature: TEXT,
  Barcode: TEXT,
  Geolocation: TEXT,
  JSON: { kind: 'json', column: () => 'json' },
  Table: { kind: 'table' },
  'Table MultiSelect': { kind: 'table' },
  'Section Break': LAYOUT,
  'Column Break': LAYOUT,
  'Tab Break': LAYOUT,
  HTML: LAYOUT,
  Button: LAYOUT,
  Image: LAYOUT,
  Fold: LAYOUT,
  Heading: LAYOUT,
} as const satisfies Record<string, FieldTypeSpec>;

export type FieldType = keyof typeof FIELD_TYPES;

export function fieldTypeSpec(fieldtype: string): FieldTypeSpec {
  const spec = (FIELD_TYPES as Record<string, FieldTypeSpec>)[fieldtype];
  if (!spec) throw new Error(`unknown fieldtype ${fieldtype}`);
  return spec;
}

/** The SQL type a bind parameter compared against a column of this kind is cast to. */
export const PARAM_CAST: Record<ValueKind, string> = {
  text: 'text',
  int: 'bigint',
  float: 'numeric',
  check: 'smallint',
  date: 'date',
  datetime: 'timestamp',
  time: 'time',
  json: 'text',
  table: 'text',
  none: 'text',
};

/** Frappe's `ifnull(col, fallback)` value per kind, as SQL (numeric kinds are NOT NULL). */
export const NULL_FALLBACK: Record<ValueKind, string> = {
  text: "''",
  int: '0',
  float: '0',
  check: '0',
  date: "'0001-01-01'::date",
  datetime: "'0001-01-01 00:00:00'::timestamp",
  time: "'00:00:00'::time",
  json: "''",
  table: "''",
  none: "''",
};
