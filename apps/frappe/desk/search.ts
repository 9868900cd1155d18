import { whitelist, type MethodArgs } from '@quire/apps';
import { cstr, decodeJsonArg } from '@quire/frappe-compat';
import { DataError, FrappeTypeError, ValidationError } from '@quire/errors';
import { ident } from '@quire/db';
import type { Meta } from '@quire/meta';
import { permittedLevels } from '@quire/permissions';
import { listStatement } from '@quire/query';

/**
 * frappe.desk.search.search_link: what a Link field offers as the user types. The matching rows
 * come from the list compiler (so the caller's read permission applies in SQL), ordered as
 * Frappe orders them: where `txt` first appears in the name, then `idx desc`, then the DocType's
 * sort; within the page, names starting with `txt` come first, then by name.
 */

/** Fieldtypes whose values `txt` is matched against (frappe/desk/search.py::search_widget). */
const SEARCHABLE = new Set(['Data', 'Text', 'Small Text', 'Long Text', 'Link', 'Select', 'Read Only', 'Text Editor']);
const FIELDNAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface LinkResult {
  value: unknown;
  label?: unknown;
  description: string;
}

function doctypeArg(args: MethodArgs): string {
  const doctype = args.doctype;
  if (typeof doctype !== 'string' || doctype === '') throw new ValidationError('doctype is required', { title: 'Missing Argument' });
  return doctype;
}

function textArg(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  throw new FrappeTypeError(`Argument 'txt' in 'frappe.desk.search.search_link' should be of type 'str'`, { title: 'Invalid Argument' });
}

function pageLength(value: unknown, max: number): number {
  if (value === undefined || value === null || value === '') return 10;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new FrappeTypeError(`Argument 'page_length' in 'frappe.desk.search.search_link' should be of type 'int'`, { title: 'Invalid Argument' });
  }
  return n === 0 || n > max ? max : n;
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

/** Frappe's relevance_sorter: names starting with `txt` (case-insensitively) first, then by name. */
function byRelevance(txt: string): (a: LinkResult, b: LinkResult) => number {
  const prefix = txt.toLowerCase();
  const starts = (v: unknown) => String(v).toLowerCase().startsWith(prefix);
  return (a, b) => {
    const sa = starts(a.value);
    const sb = starts(b.value);
    if (sa !== sb) return sa ? -1 : 1;
    if (typeof a.value === 'number' && typeof b.value === 'number') return a.value - b.value;
    const [x, y] = [String(a.value), String(b.value)];
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/**
 * search_link(doctype, txt, query=None, filters=None, page_length=10, searchfield=None,
 * reference_doctype=None, ignore_user_permissions=False) → [{value, label?, description}]:
 * `label` is the title field's value (when the DocType has one), `description` the search
 * fields' values joined with ", ".
 */
export const search_link = whitelist(
  async (args, ctx) => {
    const doctype = doctypeArg(args);
    const { meta: tenant, principal, db } = ctx.doc;
    const meta = tenant.require(doctype);
    if (meta.issingle) throw new ValidationError(`${meta.name} is a Single DocType and cannot be searched`, { title: 'Single DocType' });
    if (args.query !== undefined && args.query !== null && args.query !== '') {
      throw new ValidationError(`Custom link queries are not supported (query ${cstr(args.query)})`, { title: 'Not Supported' });
    }
    const hidden = permittedLevels(meta, principal).hidden;
    const txt = textArg(args.txt);
    const searchfield = searchField(meta, hidden, args.searchfield);
    const limit = pageLength(args.page_length, ctx.settings.maxPageLength);

    const title = meta.titleField ? readable(meta, hidden, meta.titleField) : undefined;
    const searchFields = unique(
      (meta.definition.search_fields ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
        .map((s) => readable(meta, hidden, s))
        .filter((s): s is string => s !== undefined),
    );
    // Frappe's get_std_fields_list: name, the title, the searchfield, then the search fields.
    const described = unique([...(searchfield ? [searchfield] : []), ...searchFields]).filter((f) => f !== 'name' && f !== title);

    const filters = filterList(args.filters);
    for (const [field, condition] of [
      ['enabled', ['=', 1]],
      ['disabled', ['!=', 1]],
    ] as const) {
      if (meta.field(field)?.fieldtype === 'Check' && !hidden.has(field)) filters.push([field, condition[0], condition[1]]);
    }
    const orFilters: unknown[] = [];
    if (txt !== '') {
      const pattern = `%${txt.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const matched = unique(['name', ...(title ? [title] : []), ...searchFields]).filter(
        (f) => f === 'name' || SEARCHABLE.has(meta.field(f)?.fieldtype ?? ''),
      );
      for (const f of matched) orFilters.push([f, 'like', pattern]);
    }

    const sort = sortColumns(meta, hidden);
    const fields = [
      'name as v',
      ...(title ? [`${title} as t`] : []),
      ...described.map((f, i) => `${f} as d${i}`),
      'idx as x',
      ...sort.map((s, i) => `${s.field} as o${i}`),
    ];
    const inner = listStatement(
      { fields, filters, or_filters: orFilters, limit_page_length: ctx.settings.maxPageLength },
      { meta, tenant, principal, maxPageLength: ctx.settings.maxPageLength },
    );
    // Frappe's _relevance (1 / locate(txt, name), nulls last) needs an expression the list grammar
    // refuses; the compiled statement is wrapped, and txt is a bind parameter like every value.
    const relevance = txt.replace(/[%@,]/g, '');
    const n = inner.values.length;
    const order = [
      `NULLIF(strpos(lower(s.${ident('v')}::text), lower($${n + 1}::text)), 0) ASC NULLS LAST`,
      `s.${ident('x')} DESC`,
      ...sort.map((o, i) => `s.${ident(`o${i}`)} ${o.direction}`),
    ];
    const { rows } = await db.query<Record<string, unknown>>(`SELECT * FROM (${inner.text}) AS s ORDER BY ${order.join(', ')} LIMIT $${n + 2}`, [
      ...inner.values,
      relevance,
      limit,
    ]);

    const results = rows.map((row): LinkResult => {
      const parts = unique(
        described
          .map((_, i) => row[`d${i}`])
          .filter((v) => v !== null && v !== undefined && v !== '' && v !== 0)
          .map(String),
      );
      const description = parts.join(', ');
      return title ? { value: row.v, label: row.t ?? null, description } : { value: row.v, description };
    });
    return results.sort(byRelevance(txt));
  },
  { allowScopedTokens: true },
);
