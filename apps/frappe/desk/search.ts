import { whitelist, type MethodContext } from '@quire/apps';
import { cstr, decodeJsonArg, pyBool } from '@quire/frappe-compat';
import { DataError, FrappeTypeError, ValidationError } from '@quire/errors';
import { ident } from '@quire/db';
import type { Meta } from '@quire/meta';
import { getList, type DocContext } from '@quire/documents';
import { permittedLevels, readScope } from '@quire/permissions';
import { listStatement } from '@quire/query';

/**
 * frappe.desk.search: what a Link field offers as the user types (search_link) and the same
 * matches as raw rows (search_widget), both through one matching path (matchRows below).
 */

/** Fieldtypes whose values `txt` is matched against (frappe/desk/search.py::search_widget). */
export const SEARCHABLE = new Set(['Data', 'Text', 'Small Text', 'Long Text', 'Link', 'Select', 'Read Only', 'Text Editor']);
const FIELDNAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface LinkResult {
  value: unknown;
  label?: unknown;
  description: string;
}

function doctypeArg(doctype: unknown): string {
  if (typeof doctype !== 'string' || doctype === '') throw new ValidationError('doctype is required', { title: 'Missing Argument' });
  return doctype;
}

function textArg(value: unknown, methodName: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  throw new FrappeTypeError(`Argument 'txt' in '${methodName}' should be of type 'str'`, { title: 'Invalid Argument' });
}

function pageLength(value: unknown, max: number, methodName: string): number {
  if (value === undefined || value === null || value === '') return 10;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new FrappeTypeError(`Argument 'page_length' in '${methodName}' should be of type 'int'`, { title: 'Invalid Argument' });
  }
  return n === 0 || n > max ? max : n;
}

/** Frappe's cint(start), stricter: a non-negative integer or nothing. */
function startArg(value: unknown, methodName: string): number {
  if (value === undefined || value === null || value === '') return 0;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new FrappeTypeError(`Argument 'start' in '${methodName}' should be of type 'int'`, { title: 'Invalid Argument' });
  }
  return n;
}

/** A readable column of the DocType, or undefined. */
function readable(meta: Meta, hidden: ReadonlySet<string>, fieldname: string): string | undefined {
  return FIELDNAME_RE.test(fieldname) && meta.hasColumn(fieldname) && !hidden.has(fieldname) ? fieldname : undefined;
}

/** Frappe's sanitize_searchfield, stricter: it must name a readable column. */
function searchField(meta: Meta, hidden: ReadonlySet<string>, value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !readable(meta, hidden, value))
    throw new DataError(`Invalid Search Field ${cstr(value)}`, { title: 'Invalid Search Field' });
  return value;
}

/** `filters` as a list of tuples, so the automatic ones can be added (Frappe's make_filter_tuple for a dict). */
function filterList(value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') return [];
  const decoded: unknown = decodeJsonArg('filters', value);
  if (decoded === null) return [];
  if (Array.isArray(decoded)) {
    const list: unknown[] = decoded;
    return list.length > 0 && typeof list[0] === 'string' ? [list] : [...list];
  }
  if (typeof decoded === 'object') {
    return Object.entries(decoded as Record<string, unknown>).map(([field, v]): unknown[] =>
      Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' ? [field, v[0], v[1]] : [field, '=', v],
    );
  }
  throw new ValidationError('filters must be a JSON object or list', { title: 'Invalid Filter' });
}

/** The DocType's default order (sort_field, possibly a comma list) on readable columns. */
function sortColumns(meta: Meta, hidden: ReadonlySet<string>): Array<{ field: string; direction: 'ASC' | 'DESC' }> {
  const out: Array<{ field: string; direction: 'ASC' | 'DESC' }> = [];
  for (const part of meta.sortField.split(',')) {
    const [name, dir] = part.trim().split(/\s+/);
    const field = name ? readable(meta, hidden, name) : undefined;
    if (!field) continue;
    out.push({ field, direction: dir && /^(asc|desc)$/i.test(dir) ? (dir.toUpperCase() as 'ASC' | 'DESC') : meta.sortOrder });
  }
  return out;
}

function unique<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}

/** Frappe's relevance_sorter: names (a row's first value) starting with `txt` (case-insensitively) first, then by name. */
function byRelevance(txt: string): (a: unknown[], b: unknown[]) => number {
  const prefix = txt.toLowerCase();
  const starts = (v: unknown) => String(v).toLowerCase().startsWith(prefix);
  return ([a], [b]) => {
    const sa = starts(a);
    const sb = starts(b);
    if (sa !== sb) return sa ? -1 : 1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    const [x, y] = [String(a), String(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/** The matching rows of a search, each as values in `columns` order (name first). */
interface Matches {
  columns: string[];
  /** The title field's column, when the DocType has a readable one. */
  title: string | undefined;
  rows: unknown[][];
}

/** The arguments search_link and search_widget share (frappe/desk/search.py::search_widget). */
interface SearchRequest {
  doctype: unknown;
  txt: unknown;
  query: unknown;
  searchfield: unknown;
  start: unknown;
  pageLength: unknown;
  filters: unknown;
  filterFields: unknown;
}

/** Extra columns a client asks for (search_widget's `filter_fields`, a JSON list); each must be a readable column. */
function extraFields(meta: Meta, hidden: ReadonlySet<string>, value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const decoded: unknown = decodeJsonArg('filter_fields', value);
  if (!Array.isArray(decoded)) throw new ValidationError('filter_fields must be a JSON list of fieldnames', { title: 'Invalid Argument' });
  return (decoded as unknown[]).map((f) => {
    if (typeof f !== 'string' || !readable(meta, hidden, f)) throw new DataError(`Invalid Search Field ${cstr(f)}`, { title: 'Invalid Search Field' });
    return f;
  });
}

/**
 * The one search path of Link fields and the search widget: the matching rows come from the list
 * compiler (so the caller's read permission applies in SQL), ordered as Frappe orders them: where
 * `txt` first appears in the name, then `idx desc`, then the DocType's sort; within the page,
 * names starting with `txt` come first, then by name. Columns: Frappe's get_std_fields_list
 * (name, the title, the searchfield, then the search fields), then `filter_fields`.
 */
async function matchRows(request: SearchRequest, ctx: MethodContext, methodName: string): Promise<Matches> {
  const doctype = doctypeArg(request.doctype);
  const { meta: tenant, principal, db } = ctx.doc;
  const meta = tenant.require(doctype);
  if (meta.issingle) throw new ValidationError(`${meta.name} is a Single DocType and cannot be searched`, { title: 'Single DocType' });
  if (request.query !== undefined && request.query !== null && request.query !== '') {
    throw new ValidationError(`Custom link queries are not supported (query ${cstr(request.query)})`, { title: 'Not Supported' });
  }
  const hidden = permittedLevels(meta, principal).hidden;
  const txt = textArg(request.txt, methodName);
  const searchfield = searchField(meta, hidden, request.searchfield);
  const limit = pageLength(request.pageLength, ctx.settings.maxPageLength, methodName);
  const start = startArg(request.start, methodName);

  const title = meta.titleField ? readable(meta, hidden, meta.titleField) : undefined;
  const searchFields = unique(
    (meta.definition.search_fields ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => readable(meta, hidden, s))
      .filter((s): s is string => s !== undefined),
  );
  const columns = unique([
    'name',
    ...(title ? [title] : []),
    ...(searchfield ? [searchfield] : []),
    ...searchFields,
    ...extraFields(meta, hidden, request.filterFields),
  ]);

  const filters = filterList(request.filters);
  for (const [field, condition] of [
    ['enabled', ['=', 1]],
    ['disabled', ['!=', 1]],
  ] as const) {
    if (meta.field(field)?.fieldtype === 'Check' && !hidden.has(field)) filters.push([field, condition[0], condition[1]]);
  }
  const orFilters: unknown[] = [];
  if (txt !== '') {
    const pattern = `%${txt.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const matched = unique(['name', ...(title ? [title] : []), ...searchFields]).filter((f) => f === 'name' || SEARCHABLE.has(meta.field(f)?.fieldtype ?? ''));
    for (const f of matched) orFilters.push([f, 'like', pattern]);
  }

  const sort = sortColumns(meta, hidden);
  const fields = [...columns.map((f, i) => `${f} as c${i}`), 'idx as x', ...sort.map((s, i) => `${s.field} as o${i}`)];
  const inner = listStatement(
    { fields, filters, or_filters: orFilters, limit_page_length: ctx.settings.maxPageLength },
    { meta, tenant, principal, maxPageLength: ctx.settings.maxPageLength },
  );
  // Frappe's _relevance (1 / locate(txt, name), nulls last) needs an expression the list grammar
  // refuses; the compiled statement is wrapped, and txt is a bind parameter like every value.
  const relevance = txt.replace(/[%@,]/g, '');
  const n = inner.values.length;
  const order = [
    `NULLIF(strpos(lower(s.${ident('c0')}::text), lower($${n + 1}::text)), 0) ASC NULLS LAST`,
    `s.${ident('x')} DESC`,
    ...sort.map((o, i) => `s.${ident(`o${i}`)} ${o.direction}`),
  ];
  const { rows } = await db.query<Record<string, unknown>>(`SELECT * FROM (${inner.text}) AS s ORDER BY ${order.join(', ')} LIMIT $${n + 2} OFFSET $${n + 3}`, [
    ...inner.values,
    relevance,
    limit,
    start,
  ]);
  const values = rows.map((row) => columns.map((_, i) => row[`c${i}`]));
  return { columns, title, rows: values.sort(byRelevance(txt)) };
}

/**
 * search_link(doctype, txt, query=None, filters=None, page_length=10, searchfield=None,
 * reference_doctype=None, ignore_user_permissions=False) → [{value, label?, description}]:
 * `label` is the title field's value (when the DocType has one), `description` the other
 * columns' values joined with ", ".
 */
export const search_link = whitelist(
  async (args, ctx) => {
    const { columns, title, rows } = await matchRows(
      {
        doctype: args.doctype,
        txt: args.txt,
        query: args.query,
        searchfield: args.searchfield,
        start: undefined,
        pageLength: args.page_length,
        filters: args.filters,
        filterFields: undefined,
      },
      ctx,
      'frappe.desk.search.search_link',
    );
    const titleAt = title ? columns.indexOf(title) : -1;
    return rows.map((row): LinkResult => {
      const parts = unique(
        row
          .filter((_, i) => i !== 0 && i !== titleAt)
          .filter((v) => v !== null && v !== undefined && v !== '' && v !== 0)
          .map(String),
      );
      const description = parts.join(', ');
      return titleAt >= 0 ? { value: row[0], label: row[titleAt] ?? null, description } : { value: row[0], description };
    });
  },
  { allowScopedTokens: true },
);

/**
 * search_widget(doctype, txt, query=None, searchfield=None, start=0, page_length=10, filters=None,
 * filter_fields=None, as_dict=False, reference_doctype=None, ignore_user_permissions=False): the
 * same matches as search_link, as Frappe answers them: each row a list of the columns' values
 * (name, the title, the searchfield, the search fields, the filter fields), or with `as_dict` an
 * object keyed by fieldname.
 */
export const search_widget = whitelist(
  async (args, ctx) => {
    const { columns, rows } = await matchRows(
      {
        doctype: args.doctype,
        txt: args.txt,
        query: args.query,
        searchfield: args.searchfield,
        start: args.start,
        pageLength: args.page_length,
        filters: args.filters,
        filterFields: args.filter_fields,
      },
      ctx,
      'frappe.desk.search.search_widget',
    );
    if (!pyBool(args.as_dict)) return rows;
    return rows.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
  },
  { allowScopedTokens: true },
);

// ------------------------------------------------------------------------------------ link titles

/** The title field a Link to `meta` shows instead of the name (show_title_field_in_link), if any. */
function linkTitleField(meta: Meta): string | undefined {
  const titleField = meta.titleField;
  if (!meta.definition.show_title_field_in_link || !titleField || meta.issingle || meta.isVirtual) return undefined;
  return titleField;
}

/** Names an autoincrement DocType could hold: its name column is an integer, so others match nothing (and would not coerce). */
function possibleNames(meta: Meta, names: ReadonlyArray<string | number>): Array<string | number> {
  return meta.namingRule === 'autoincrement' ? names.filter((n) => /^\s*\d+\s*$/.test(String(n))) : [...names];
}

/**
 * The title field's value of each of `names` in `meta` the caller may read, keyed by name, empty
 * ones included (the list sidebar's counts send them as they are): one query through the list
 * compiler, so only documents the caller may read come back. Nothing for a DocType without
 * show_title_field_in_link, nor when the caller may not read the DocType or the title field's
 * permlevel (stricter than Frappe, which reads the title whatever the caller's rights).
 */
export async function readLinkTitles(ctx: DocContext, meta: Meta, names: ReadonlyArray<unknown>): Promise<Map<string, unknown>> {
  const titles = new Map<string, unknown>();
  const titleField = linkTitleField(meta);
  const { principal } = ctx;
  if (!titleField || !meta.hasColumn(titleField) || readScope(meta, principal) === false) return titles;
  if (permittedLevels(meta, principal).hidden.has(titleField)) return titles;
  const given = names.filter((n): n is string | number => (typeof n === 'string' && n !== '') || typeof n === 'number');
  const wanted = unique(possibleNames(meta, given));
  if (wanted.length === 0) return titles;
  const rows = (await getList(
    ctx,
    meta.name,
    { fields: unique(['name', titleField]), filters: [['name', 'in', wanted]], limit_page_length: wanted.length, as_dict: true },
    wanted.length,
  )) as Array<Record<string, unknown>>;
  for (const row of rows) titles.set(String(row.name), row[titleField]);
  return titles;
}

/** The titles Links to `meta` show for `names` (get_link_title and getdoc's `_link_titles`): readLinkTitles without the empty ones. */
export async function linkTitles(ctx: DocContext, meta: Meta, names: ReadonlyArray<string | number>): Promise<Map<string, unknown>> {
  const titles = await readLinkTitles(ctx, meta, names);
  for (const [name, title] of titles) if (title === undefined || title === null || title === '') titles.delete(name);
  return titles;
}

/**
 * get_link_title(doctype, docname): what a Link to `doctype` shows instead of the name when the
 * DocType sets `show_title_field_in_link` (Frappe's desk asks it for each Link value it draws).
 * Nothing otherwise, and nothing when the caller may not read that document or its title field:
 * stricter than Frappe, which reads the title whatever the caller's rights.
 */
export const get_link_title = whitelist(
  async (args, ctx) => {
    const meta = ctx.doc.meta.require(doctypeArg(args.doctype));
    const docname = args.docname;
    if (!linkTitleField(meta)) return undefined;
    if (typeof docname !== 'string' && typeof docname !== 'number') throw new ValidationError('docname is required', { title: 'Missing Argument' });
    return (await linkTitles(ctx.doc, meta, [docname])).get(String(docname));
  },
  { allowScopedTokens: true },
);
