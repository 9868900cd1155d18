import { whitelist, type MethodContext } from '@quire/apps';
import { qualified } from '@quire/db';
import { storedName } from '@quire/documents';
import { FrappeTypeError, ValidationError } from '@quire/errors';
import { cstr } from '@quire/frappe-compat';
import type { Meta } from '@quire/meta';
import { grantsOf, permittedLevels } from '@quire/permissions';
import { listStatement } from '@quire/query';
// The fallback matches the fieldtypes search_link matches.
import { SEARCHABLE } from '../desk/search';
import { formatValue, GLOBAL_SEARCH_TABLE, globalSearchFields, optsInToGlobalSearch } from './global_search_index';

/**
 * frappe.utils.global_search.search(text, start=0, limit=20, doctype=""): documents matching
 * `text` across the DocTypes the caller may read, as `{doctype, name, content, title}` rows.
 *
 * Two sources, so that a search stays fast at a real tenant's size:
 * - DocTypes that opt in (fields marked `in_global_search`, Frappe's way) are searched in the
 *   tenant's `__global_search` table, kept in each save's transaction (global_search_index.ts).
 *   Every word of `text` is a prefix query on a GIN index of the content's words, so a search
 *   costs the matching rows (at most RANKED are ranked), not the tables; at most CANDIDATES rows
 *   are taken from it.
 * - Other DocTypes are searched on `name`, their title field and `search_fields` (as a Link field
 *   searches them), through the list compiler. `ILIKE '%text%'` cannot use an index: each such
 *   DocType costs at most one scan of its table, so only FALLBACK_DOCTYPES of them are searched
 *   (those that declare a title or search fields first) and each gives at most PER_DOCTYPE rows.
 *   A large DocType should opt in.
 *
 * Frappe only checks that the caller may read the DocType; here every row also passes the list
 * compiler's row conditions (if_owner, user permissions) for its DocType, and fields at permlevels
 * the caller cannot read are neither matched nor shown.
 */

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
/** Index matches ranked at most (the first found, when a search matches more). */
const RANKED = 2000;
/**
 * Rows taken from the index, best first, before the permission check: a page's worth twice,
 * bounded. A caller who may read few of the best matches (if_owner) may get fewer than `limit`.
 */
const CANDIDATES = 400;
const FALLBACK_DOCTYPES = 20;
const PER_DOCTYPE = 20;
const METHOD = 'frappe.utils.global_search.search';

export interface GlobalSearchResult {
  doctype: string;
  name: string;
  content: string;
  title: string;
}

function intArg(name: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new FrappeTypeError(`Argument '${name}' in '${METHOD}' should be of type 'int'`, { title: 'Invalid Argument' });
  return n;
}

function textArg(value: unknown): string {
  if (value === undefined || value === null)
    throw new ValidationError(`${METHOD}() missing 1 required positional argument: 'text'`, { title: 'Missing Argument' });
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new FrappeTypeError(`Argument 'text' in '${METHOD}' should be of type 'str'`, { title: 'Invalid Argument' });
}

/** Frappe splits `text` on `&` into phrases searched separately (their results are joined). */
function phrasesOf(text: string): string[] {
  return [
    ...new Set(
      text
        .split('&')
        .map((p) => p.trim())
        .filter((p) => p !== ''),
    ),
  ];
}

const WORD = /[\p{L}\p{N}]+/gu;

/** A tsquery: each phrase's words as prefixes, all required; phrases as alternatives. Words are letters and digits only, so quoting is safe. */
function tsQueryOf(phrases: readonly string[]): string {
  return phrases
    .map((p) => (p.toLowerCase().match(WORD) ?? []).map((w) => `'${w}':*`).join(' & '))
    .filter((q) => q !== '')
    .map((q) => `(${q})`)
    .join(' | ');
}

/** Whether readable text still matches a phrase the way the index matched it (every word a prefix of a word). */
function matchesText(text: string, phrases: readonly string[]): boolean {
  const words = text.toLowerCase().match(WORD) ?? [];
  return phrases.some((p) => {
    const wanted = p.toLowerCase().match(WORD) ?? [];
    return wanted.length > 0 && wanted.every((w) => words.some((x) => x.startsWith(w)));
  });
}

/** DocTypes whose documents the caller may read (some or all of them). */
function readableDoctypes(ctx: MethodContext, only: string): Meta[] {
  const { meta: tenant, principal } = ctx.doc;
  const out: Meta[] = [];
  for (const meta of tenant.all()) {
    if (meta.istable || meta.issingle || meta.isVirtual || meta.name === 'DocType') continue;
    if (only !== '' && meta.name !== only) continue;
    if (grantsOf(meta, principal).read === false) continue;
    out.push(meta);
  }
  return out;
}

function readableField(meta: Meta, hidden: ReadonlySet<string>, fieldname: string | undefined): string | undefined {
  return fieldname && meta.hasColumn(fieldname) && !hidden.has(fieldname) ? fieldname : undefined;
}

function titleOf(row: Record<string, unknown>): string {
  const t = row.t;
  return t === undefined || t === null || t === '' ? cstr(row.n) : cstr(t);
}

/** Rows of `meta` the caller may read among `names`, by name, with the readable title and the asked fields. */
async function readableRows(ctx: MethodContext, meta: Meta, names: unknown[], fields: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const { meta: tenant, principal, db } = ctx.doc;
  const hidden = permittedLevels(meta, principal).hidden;
  const title = readableField(meta, hidden, meta.titleField);
  const statement = listStatement(
    {
      fields: ['name as n', ...(title ? [`${title} as t`] : []), ...fields.map((f, i) => `${f} as f${i}`)],
      filters: [['name', 'in', names]],
      limit_page_length: names.length,
    },
    { meta, tenant, principal, maxPageLength: ctx.settings.maxPageLength },
  );
  const { rows } = await db.query<Record<string, unknown>>(statement.text, statement.values);
  return new Map(rows.map((r) => [cstr(r.n), r]));
}

/** Matches in the index, in rank order, kept only where the caller may read the row and what matched. */
async function indexMatches(ctx: MethodContext, doctypes: Meta[], phrases: readonly string[], wanted: number): Promise<GlobalSearchResult[]> {
  const query = tsQueryOf(phrases);
  if (doctypes.length === 0 || query === '') return [];
  const { db, tenant, meta: tenantMeta, principal } = ctx.doc;
  const words = `to_tsvector('simple'::regconfig, "content")`;
  // Ranked among the first RANKED matches only: ranking re-reads each row's words, so a word found
  // in half the table must not mean ranking half the table.
  const { rows } = await db.query<{ doctype: string; name: string; content: string }>(
    `WITH "hits" AS (
       SELECT "doctype", "name", "content" FROM ${qualified(tenant.schema, GLOBAL_SEARCH_TABLE)}
       WHERE "doctype" = ANY($1::text[]) AND ${words} @@ to_tsquery('simple'::regconfig, $2) LIMIT $4)
     SELECT "doctype", "name", "content" FROM "hits"
     ORDER BY ts_rank(${words}, to_tsquery('simple'::regconfig, $2)) DESC, "doctype", "name" LIMIT $3`,
    [doctypes.map((m) => m.name), query, Math.min(CANDIDATES, wanted * 2), RANKED],
  );
  const byDoctype = new Map<string, typeof rows>();
  for (const r of rows) byDoctype.set(r.doctype, [...(byDoctype.get(r.doctype) ?? []), r]);
  const kept = new Map<string, GlobalSearchResult>();
  for (const [doctype, candidates] of byDoctype) {
    const meta = tenantMeta.require(doctype);
    const hidden = permittedLevels(meta, principal).hidden;
    const fields = globalSearchFields(meta);
    // When every indexed field (and table) is readable, the stored content is what the caller may see;
    // otherwise only the readable fields are read back, and must match on their own.
    const partial = fields.some((f) => hidden.has(f.fieldname)) || meta.tableFields.some((t) => hidden.has(t.fieldname));
    const readableFields = fields.filter((f) => !hidden.has(f.fieldname));
    const names = candidates.map((c) => storedName(meta, c.name)).filter((n) => n !== undefined);
    if (names.length === 0) continue;
    const readable = await readableRows(ctx, meta, names, partial ? readableFields.map((f) => f.fieldname) : []);
    for (const c of candidates) {
      const row = readable.get(c.name);
      if (!row) continue;
      let content = c.content;
      if (partial) {
        content = readableFields
          .map((f, i) => [f, row[`f${i}`]] as const)
          .filter(([, v]) => v !== undefined && v !== null && v !== '' && v !== 0)
          .map(([f, v]) => formatValue(f, v))
          .join(' ||| ');
        if (!matchesText(content, phrases)) continue;
      }
      kept.set(`${doctype}\0${c.name}`, { doctype, name: c.name, content, title: titleOf(row) });
    }
  }
  // back in the index's rank order
  return rows.map((r) => kept.get(`${r.doctype}\0${r.name}`)).filter((r): r is GlobalSearchResult => r !== undefined);
}

function searchFieldsOf(meta: Meta, hidden: ReadonlySet<string>): string[] {
  const declared = (meta.definition.search_fields ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const title = readableField(meta, hidden, meta.titleField);
  return [...new Set(declared.map((f) => readableField(meta, hidden, f)).filter((f): f is string => f !== undefined && f !== title && f !== 'name'))];
}

/** The DocTypes searched without an index: those with a title or search fields first, then by name; at most FALLBACK_DOCTYPES. */
function fallbackDoctypes(doctypes: Meta[]): Meta[] {
  const described = (m: Meta) => (m.titleField || m.definition.search_fields ? 0 : 1);
  return [...doctypes].sort((a, b) => described(a) - described(b) || a.name.localeCompare(b.name)).slice(0, FALLBACK_DOCTYPES);
}

/** Matches on name, title and search fields of DocTypes not in the index, through the list compiler. */
async function fieldMatches(ctx: MethodContext, doctypes: Meta[], phrases: readonly string[], wanted: number): Promise<GlobalSearchResult[]> {
  const { meta: tenant, principal, db } = ctx.doc;
  const out: GlobalSearchResult[] = [];
  for (const meta of fallbackDoctypes(doctypes)) {
    const hidden = permittedLevels(meta, principal).hidden;
    const title = readableField(meta, hidden, meta.titleField);
    const extra = searchFieldsOf(meta, hidden);
    const matched = ['name', ...(title ? [title] : []), ...extra].filter((f) => f === 'name' || SEARCHABLE.has(meta.field(f)?.fieldtype ?? ''));
    const orFilters = phrases.flatMap((p) => matched.map((f) => [f, 'like', `%${p.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]));
    const statement = listStatement(
      {
        fields: ['name as n', ...(title ? [`${title} as t`] : []), ...extra.map((f, i) => `${f} as f${i}`)],
        or_filters: orFilters,
        limit_page_length: Math.min(PER_DOCTYPE, wanted),
      },
      { meta, tenant, principal, maxPageLength: ctx.settings.maxPageLength },
    );
    const { rows } = await db.query<Record<string, unknown>>(statement.text, statement.values);
    for (const row of rows) {
      const parts = [...(title ? [[meta.field(title), row.t] as const] : []), ...extra.map((f, i) => [meta.field(f), row[`f${i}`]] as const)]
        .filter(([f, v]) => f !== undefined && v !== undefined && v !== null && v !== '' && v !== 0)
        .map(([f, v]) => formatValue(f as NonNullable<typeof f>, v));
      out.push({ doctype: meta.name, name: cstr(row.n), content: parts.length > 0 ? parts.join(' ||| ') : cstr(row.n), title: titleOf(row) });
    }
  }
  return out;
}

export const search = whitelist(
  async (args, ctx): Promise<GlobalSearchResult[]> => {
    const phrases = phrasesOf(textArg(args.text));
    const start = intArg('start', args.start, 0);
    const limit = Math.min(intArg('limit', args.limit, DEFAULT_LIMIT), MAX_LIMIT);
    const only = args.doctype === undefined || args.doctype === null ? '' : cstr(args.doctype);
    if (phrases.length === 0 || limit === 0) return [];
    const wanted = start + limit;
    const doctypes = readableDoctypes(ctx, only);
    const indexed = doctypes.filter((m) => optsInToGlobalSearch(ctx.doc.meta, m));
    const others = doctypes.filter((m) => !indexed.includes(m));
    const results = [...(await indexMatches(ctx, indexed, phrases, wanted)), ...(await fieldMatches(ctx, others, phrases, wanted))];
    return results.slice(start, start + limit);
  },
  { allowScopedTokens: true },
);
