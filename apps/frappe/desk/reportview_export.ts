import type { DownloadFile, MethodArgs, MethodContext } from '@quire/apps';
import { getList } from '@quire/documents';
import { DataError, PermissionError, ValidationError } from '@quire/errors';
import { cint, decodeJsonArg } from '@quire/frappe-compat';
import { fieldTypeSpec, type Meta } from '@quire/meta';
import { isOwnedBy, ownerColumns, permittedLevels } from '@quire/permissions';

/**
 * frappe.desk.reportview.export_query as a CSV download, the way Frappe's `_export_query` writes it:
 * a header row `Sr` + the columns' labels (`ID` for `name`, the standard columns' labels, a field's
 * label), then one row per document numbered from 1; Python's csv writer with Frappe's defaults
 * (`,` and QUOTE_NONNUMERIC: every cell quoted but numbers, CRLF line ends), HTML turned into its
 * text. Answered as `Content-Type: text/csv` with `Content-Disposition: attachment;
 * filename="<title>.csv"`. Excel is refused with a 417 (not supported here).
 *
 * Rows come from the list compiler (@quire/documents getList, one statement with the caller's
 * row permissions in its WHERE), so only documents the caller may read are exported; columns at a
 * permlevel the caller may not read are left out (as Frappe's validate_fields drops them). With
 * only an if-owner export right, every exported row must be the caller's own (Frappe's 403
 * otherwise). `selected_items` (a JSON list of names) replaces the filters, as in Frappe.
 *
 * Fields may be written plain (`status`, `` `status` ``) or as the desk writes them
 * (`` `tabToDo`.`status` ``); only the DocType's own columns can be exported.
 *
 * CSV formula injection: a spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (or a tab or
 * carriage return before one) as a formula, so such a text cell is written with a leading `'`
 * (OWASP's advice); numbers are written as numbers and never prefixed.
 */

/** The most rows one export writes (Frappe has no cap; this keeps an export to one answer's worth). */
const EXPORT_MAX_ROWS = 100_000;

/** Frappe's DEFAULT_FIELD_LABELS (frappe/model/meta.py): the standard columns' labels. */
const STANDARD_LABELS: Readonly<Record<string, string>> = {
  name: 'ID',
  creation: 'Created On',
  docstatus: 'Document Status',
  idx: 'Index',
  modified: 'Last Updated On',
  modified_by: 'Last Updated By',
  owner: 'Created By',
  _user_tags: 'Tags',
  _liked_by: 'Liked By',
  _comments: 'Comments',
  _assign: 'Assigned To',
};

/** `field`, `` `field` ``, `tabX.field` or `` `tabX`.`field` ``: the DocType named (if any) and the column. */
const FIELD_RE = /^(?:`?tab([^`.]+)`?\.)?`?([A-Za-z_][A-Za-z0-9_]*)`?$/;

interface Column {
  fieldname: string;
  label: string;
  /** Float, Currency and Percent values are written as Python writes a float (`3.0`). */
  float: boolean;
}

function invalidField(field: string): never {
  throw new DataError(`Field not permitted in query: ${field}`, { title: 'Invalid Field' });
}

function columnOf(meta: Meta, fieldname: string): Column {
  const field = meta.field(fieldname);
  const label = field?.label || STANDARD_LABELS[fieldname] || fieldname;
  const float = field !== undefined && fieldTypeSpec(field.fieldtype).kind === 'float';
  return { fieldname, label, float };
}

/** The columns to export: the requested ones the caller may read, in order (`*`: every readable column). */
function columnsOf(meta: Meta, ctx: MethodContext, value: unknown): Column[] {
  const hidden = permittedLevels(meta, ctx.doc.principal).hidden;
  let fields: unknown = value === undefined || value === null || value === '' ? ['name'] : decodeJsonArg('fields', value);
  if (fields === '*') fields = ['*'];
  if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string')) {
    throw new ValidationError('fields must be a JSON list of field names', { title: 'Invalid Request' });
  }
  const names: string[] = [];
  for (const raw of fields as string[]) {
    if (raw.trim() === '*') {
      names.push(...meta.columns.map((c) => c.name));
      continue;
    }
    const m = FIELD_RE.exec(raw.trim());
    if (!m || (m[1] !== undefined && m[1] !== meta.name)) invalidField(raw);
    const fieldname = m[2] as string;
    if (!meta.hasColumn(fieldname)) invalidField(raw);
    names.push(fieldname);
  }
  const readable = [...new Set(names)].filter((f) => !hidden.has(f));
  if (readable.length === 0) throw new PermissionError(`No field of ${meta.name} asked for may be exported`, { title: 'Not Permitted' });
  return readable.map((f) => columnOf(meta, f));
}

/** Frappe's csv_quoting values (Python's csv module constants); QUOTE_NONE needs an escape character Frappe does not pass. */
const QUOTE_MINIMAL = 0;
const QUOTE_ALL = 1;
const QUOTE_NONNUMERIC = 2;

interface CsvParams {
  delimiter: string;
  quoting: number;
}

function csvParamsOf(args: MethodArgs): CsvParams {
  const given = args.csv_delimiter;
  const delimiter = given === undefined || given === '' ? ',' : given;
  if (typeof delimiter !== 'string' || delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') {
    throw new ValidationError('csv_delimiter must be one character', { title: 'Invalid Request' });
  }
  const quoting = args.csv_quoting === undefined || args.csv_quoting === '' ? QUOTE_NONNUMERIC : cint(args.csv_quoting);
  if (![QUOTE_MINIMAL, QUOTE_ALL, QUOTE_NONNUMERIC].includes(quoting)) {
    throw new ValidationError('csv_quoting must be 0 (minimal), 1 (all) or 2 (non-numeric)', { title: 'Invalid Request' });
  }
  return { delimiter, quoting };
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** Frappe's handle_html: a value with markup becomes its text (tags dropped, entities decoded, whitespace folded). */
function htmlToText(value: string): string {
  if (!value.includes('<') || !value.includes('>')) return value;
  return value
    .replace(/<(br|\/p|\/div|\/li|\/h[1-6])\b[^>]*>/gi, ' ')
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_m, e: string) => ENTITIES[e] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Text a spreadsheet would run as a formula gets a leading `'` (see the module comment). */
function neutraliseFormula(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

type Cell = { text: string; numeric: boolean };

function cellOf(value: unknown, column: Column): Cell {
  if (typeof value === 'number' && Number.isFinite(value)) {
    // Python writes a float with a fraction (3.0); an int as it is.
    const text = column.float && Number.isInteger(value) ? value.toFixed(1) : String(value);
    return { text, numeric: true };
  }
  if (typeof value === 'boolean') return { text: value ? 'True' : 'False', numeric: true };
  if (value === null || value === undefined) return { text: '', numeric: false };
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return { text: neutraliseFormula(htmlToText(text)), numeric: false };
}

/** One CSV row as Python's csv.writer writes it with these params (a cell with the delimiter, a quote or a line break is always quoted). */
function csvLine(cells: Cell[], params: CsvParams): string {
  return cells
    .map(({ text, numeric }) => {
      const special = text.includes(params.delimiter) || /["\r\n]/.test(text);
      const quote = special || params.quoting === QUOTE_ALL || (params.quoting === QUOTE_NONNUMERIC && !numeric);
      return quote ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(params.delimiter);
}

/** The file name Frappe gives the export: the title (the DocType by default), as `<title>.csv`. */
function fileTitle(args: MethodArgs, meta: Meta): string {
  const title = typeof args.title === 'string' && args.title.trim() !== '' ? args.title.trim() : meta.name;
  // A name, not a path.
  return title.replace(/[/\\\p{Cc}]/gu, '_').slice(0, 140);
}

/** The export of `meta` the arguments ask for; `ownOnly`: the caller's export right is if-owner. */
export async function exportQuery(ctx: MethodContext, meta: Meta, args: MethodArgs, ownOnly: boolean): Promise<DownloadFile> {
  const format = args.file_format_type === undefined || args.file_format_type === '' ? 'CSV' : args.file_format_type;
  if (format === 'Excel') throw new ValidationError('Export to Excel is not supported; choose CSV', { title: 'Not Supported' });
  if (format !== 'CSV') throw new ValidationError('file_format_type must be CSV', { title: 'Invalid Request' });
  const params = csvParamsOf(args);
  const columns = columnsOf(meta, ctx, args.fields);
  let filters: unknown = args.filters;
  if (args.selected_items !== undefined && args.selected_items !== null && args.selected_items !== '') {
    const names = decodeJsonArg('selected_items', args.selected_items);
    if (!Array.isArray(names)) throw new ValidationError('selected_items must be a JSON list of names', { title: 'Invalid Request' });
    filters = [['name', 'in', names]];
  }
  const pageLength = cint(args.page_length);
  // The ownership columns (owner, owner fields) ride along at the end when the export right is only for the caller's own documents.
  const ownership = ownOnly ? ownerColumns(meta) : [];
  const fields = [...columns.map((c) => c.fieldname), ...ownership];
  const rows = (await getList(
    ctx.doc,
    meta.name,
    { fields, filters, order_by: args.order_by, limit_page_length: pageLength > 0 ? pageLength : 0, as_dict: 0 },
    EXPORT_MAX_ROWS,
  )) as unknown[][];
  const ownedByCaller = (row: unknown[]) =>
    isOwnedBy(meta, Object.fromEntries(ownership.map((column, i) => [column, row[columns.length + i]])), ctx.doc.principal.user);
  if (ownOnly && !rows.every(ownedByCaller)) {
    throw new PermissionError(`You are not allowed to export ${meta.name} doctype`, { title: 'Not Permitted' });
  }
  const header = csvLine(
    ['Sr', ...columns.map((c) => c.label)].map((text) => ({ text: neutraliseFormula(text), numeric: false })),
    params,
  );
  const lines = [header];
  rows.forEach((row, i) => {
    const cells = columns.map((column, c) => cellOf(row[c], column));
    lines.push(csvLine([{ text: String(i + 1), numeric: true }, ...cells], params));
  });
  return { filename: `${fileTitle(args, meta)}.csv`, contentType: 'text/csv; charset=utf-8', content: lines.map((l) => `${l}\r\n`).join('') };
}
