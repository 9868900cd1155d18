import type { DocField } from './types';

/**
 * How the desk treats each fieldtype the platform knows (packages/meta FIELD_TYPES): which input
 * edits it, whether it is layout only, whether a list may show it.
 */
export type InputKind =
  | 'text'
  | 'email'
  | 'url'
  | 'tel'
  | 'password'
  | 'int'
  | 'float'
  | 'check'
  | 'select'
  | 'autocomplete'
  | 'link'
  | 'dynamic-link'
  | 'date'
  | 'datetime'
  | 'time'
  | 'textarea'
  | 'code'
  | 'json'
  | 'color'
  | 'attach'
  | 'duration'
  | 'rating'
  | 'readonly'
  | 'table'
  | 'layout';

const BY_FIELDTYPE: Record<string, InputKind> = {
  Data: 'text',
  Link: 'link',
  'Dynamic Link': 'dynamic-link',
  Select: 'select',
  'Read Only': 'readonly',
  Color: 'color',
  Icon: 'text',
  Phone: 'tel',
  Autocomplete: 'autocomplete',
  Int: 'int',
  'Long Int': 'int',
  Check: 'check',
  Currency: 'float',
  Float: 'float',
  Percent: 'float',
  Duration: 'duration',
  Rating: 'rating',
  Date: 'date',
  Datetime: 'datetime',
  Time: 'time',
  'Small Text': 'textarea',
  Text: 'textarea',
  Password: 'password',
  Attach: 'attach',
  'Attach Image': 'attach',
  'Long Text': 'textarea',
  Code: 'code',
  'Text Editor': 'textarea',
  'Markdown Editor': 'code',
  'HTML Editor': 'code',
  Signature: 'textarea',
  Barcode: 'text',
  Geolocation: 'json',
  JSON: 'json',
  Table: 'table',
  'Table MultiSelect': 'table',
  'Section Break': 'layout',
  'Column Break': 'layout',
  'Tab Break': 'layout',
  HTML: 'layout',
  Button: 'layout',
  Image: 'layout',
  Fold: 'layout',
  Heading: 'layout',
};

/** Data fields whose `options` names a kind of text (Frappe's Data options). */
const DATA_OPTIONS: Record<string, InputKind> = { Email: 'email', URL: 'url', Phone: 'tel' };

export function inputKindOf(field: DocField): InputKind {
  if (field.fieldtype === 'Data' && field.options) return DATA_OPTIONS[field.options] ?? 'text';
  return BY_FIELDTYPE[field.fieldtype] ?? 'text';
}

export function isLayout(field: DocField): boolean {
  return inputKindOf(field) === 'layout';
}

export function isTable(field: DocField): boolean {
  return inputKindOf(field) === 'table';
}

/** Fields a list may show, filter and sort on: a value of their own in the DocType's table. */
export function hasColumn(field: DocField): boolean {
  const kind = inputKindOf(field);
  return kind !== 'layout' && kind !== 'table';
}

export function isNumeric(field: DocField): boolean {
  const kind = inputKindOf(field);
  return kind === 'int' || kind === 'float' || kind === 'duration' || kind === 'rating' || kind === 'check';
}

export function labelOf(field: DocField): string {
  return field.label || field.fieldname.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
}

/** Select options, one per line (Frappe's format); empty lines are dropped (the input offers "nothing" itself). */
export function selectOptions(field: DocField): string[] {
  return (field.options ?? '')
    .split('\n')
    .map((o) => o.trim())
    .filter((o) => o !== '');
}
