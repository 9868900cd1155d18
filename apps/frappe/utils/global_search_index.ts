import { qualified, type Queryable } from '@quire/db';
import type { DocController, DocData, HookArgs } from '@quire/documents';
import { cstr } from '@quire/frappe-compat';
import { fieldLabel, fieldTypeSpec, Meta, parseDefinition, type DocField, type TenantMeta } from '@quire/meta';

/**
 * Frappe's `__global_search` table, kept up to date: a DocType opts in by marking fields
 * `in_global_search` (its own or its child tables'); each save of one of its documents writes that
 * document's row ("Label : value ||| …", as Frappe formats it) in the save's own transaction, and a
 * delete removes it, so the index never disagrees with a committed document. A DocType that has no
 * such field costs a save nothing but a lookup in its (cached) metadata.
 */

export const GLOBAL_SEARCH_TABLE = '__global_search';
const SEPARATOR = ' ||| ';

const markedFieldsOf = new WeakMap<Meta, DocField[]>();

/** The fields of `meta` marked `in_global_search` that hold a value (not tables, not layout); once per Meta. */
export function globalSearchFields(meta: Meta): DocField[] {
  let fields = markedFieldsOf.get(meta);
  if (fields === undefined) {
    fields = meta.fields.filter((f) => f.in_global_search === 1 && meta.hasColumn(f.fieldname) && fieldTypeSpec(f.fieldtype).kind !== 'table');
    markedFieldsOf.set(meta, fields);
  }
  return fields;
}

/**
 * Whether `meta` is in global search: a field of its own or of one of its child tables is marked.
 * Asked on every save: each Meta's marked fields are found once, the child tables are looked up.
 */
export function optsInToGlobalSearch(tenant: TenantMeta, meta: Meta): boolean {
  if (meta.istable || meta.issingle || meta.isVirtual) return false;
  if (globalSearchFields(meta).length > 0) return true;
  return meta.tableFields.some((t) => {
    const child = tenant.get(t.options ?? '');
    return child !== undefined && globalSearchFields(child).length > 0;
  });
}

const HTML_TAG = /<[^>]*>/g;

/** Frappe's get_formatted_value: "Label : value", markup and runs of whitespace taken out of text. */
export function formatValue(field: DocField, value: unknown): string {
  const text = cstr(value).replace(HTML_TAG, ' ').replace(/\s+/g, ' ').trim();
  return `${fieldLabel(field)} : ${text}`;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '' && value !== 0;
}

/** The indexed text of a document: its marked fields, then its child rows' marked fields. */
export function documentContent(tenant: TenantMeta, meta: Meta, doc: DocData): string {
  const parts: string[] = [];
  for (const f of globalSearchFields(meta)) if (present(doc[f.fieldname])) parts.push(formatValue(f, doc[f.fieldname]));
  for (const t of meta.tableFields) {
    const child = tenant.get(t.options ?? '');
    const rows = doc[t.fieldname];
    if (!child || !Array.isArray(rows)) continue;
    const fields = globalSearchFields(child);
    for (const f of fields) {
      for (const row of rows as DocData[]) if (present(row[f.fieldname])) parts.push(formatValue(f, row[f.fieldname]));
    }
  }
  return parts.join(SEPARATOR);
}

/** The title shown for a search result: the title field's value, else the name. */
export function documentTitle(meta: Meta, doc: DocData): string {
  const title = meta.titleField ? doc[meta.titleField] : undefined;
  return present(title) ? cstr(title) : cstr(doc.name);
}

/** Frappe leaves cancelled and disabled documents out of global search. */
function excluded(meta: Meta, doc: DocData): boolean {
  if (Number(doc.docstatus) === 2) return true;
  if (meta.field('enabled')?.fieldtype === 'Check' && !doc.enabled) return true;
  return meta.field('disabled')?.fieldtype === 'Check' && Boolean(doc.disabled);
}

function table(meta: Meta): string {
  return qualified(meta.schema, GLOBAL_SEARCH_TABLE);
}

async function removeDocument(q: Queryable, meta: Meta, name: string): Promise<void> {
  await q.query(`DELETE FROM ${table(meta)} WHERE "doctype" = $1 AND "name" = $2`, [meta.name, name]);
}

/** Writes (or removes) one document's row: Frappe's update_global_search, in the caller's transaction. */
export async function indexDocument(q: Queryable, tenant: TenantMeta, meta: Meta, doc: DocData): Promise<void> {
  const name = cstr(doc.name);
  const content = excluded(meta, doc) ? '' : documentContent(tenant, meta, doc);
  if (content === '') {
    await removeDocument(q, meta, name);
    return;
  }
  await q.query(
    `INSERT INTO ${table(meta)} ("doctype", "name", "title", "content", "route") VALUES ($1, $2, $3, $4, NULL)
     ON CONFLICT ("doctype", "name") DO UPDATE SET "title" = EXCLUDED."title", "content" = EXCLUDED."content"`,
    [meta.name, name, documentTitle(meta, doc), content],
  );
}

/** Rebuilds the rows of every document of `meta` (after its marked fields changed); the DocType's table is read in pages. */
export async function rebuildForDoctype(q: Queryable, tenant: TenantMeta, meta: Meta, pageSize = 500): Promise<number> {
  await q.query(`DELETE FROM ${table(meta)} WHERE "doctype" = $1`, [meta.name]);
  if (!optsInToGlobalSearch(tenant, meta)) return 0;
  const childTables = meta.tableFields
    .map((t) => ({ field: t.fieldname, child: tenant.get(t.options ?? '') }))
    .filter((c): c is { field: string; child: Meta } => c.child !== undefined && globalSearchFields(c.child).length > 0);
  let indexed = 0;
  let after = '';
  for (;;) {
    const { rows } = await q.query<DocData>(`SELECT * FROM ${meta.table} WHERE "name"::text > $1 ORDER BY "name"::text LIMIT $2`, [after, pageSize]);
    for (const doc of rows) {
      for (const { field, child } of childTables) {
        const children = await q.query<DocData>(
          `SELECT * FROM ${child.table} WHERE "parent" = $1 AND "parenttype" = $2 AND "parentfield" = $3 ORDER BY "idx"`,
          [cstr(doc.name), meta.name, field],
        );
        doc[field] = children.rows;
      }
      await indexDocument(q, tenant, meta, doc);
      indexed++;
    }
    if (rows.length < pageSize) return indexed;
    after = cstr(rows[rows.length - 1]?.name);
  }
}

function onSave({ tx, ctx, meta, doc, flags }: HookArgs): Promise<void> {
  if (flags.installing || !optsInToGlobalSearch(ctx.meta, meta)) return Promise.resolve();
  return indexDocument(tx, ctx.meta, meta, doc);
}

function onDelete({ tx, ctx, meta, doc }: HookArgs): Promise<void> {
  if (!optsInToGlobalSearch(ctx.meta, meta)) return Promise.resolve();
  return removeDocument(tx, meta, cstr(doc.name));
}

function markedFields(fields: unknown): string {
  if (!Array.isArray(fields)) return '';
  return (fields as DocData[])
    .filter((f) => Number(f.in_global_search) === 1)
    .map((f) => cstr(f.fieldname))
    .sort()
    .join(',');
}

/**
 * A DocType whose marked fields changed: its rows are rebuilt from its table. Frappe enqueues
 * rebuild_for_doctype; here it runs in the DocType's save (after its controller altered the table),
 * so the index agrees with the definition when it commits: one pass over the table, as an ALTER is.
 */
async function onDoctypeChange({ tx, ctx, doc, previous }: HookArgs): Promise<void> {
  if (markedFields(doc.fields) === markedFields(previous?.fields)) return;
  const meta = new Meta(parseDefinition(doc), ctx.tenant.schema);
  if (!meta.istable && !meta.issingle && !meta.isVirtual) await rebuildForDoctype(tx, ctx.meta, meta);
}

async function onDoctypeDelete({ tx, ctx, doc }: HookArgs): Promise<void> {
  await tx.query(`DELETE FROM ${qualified(ctx.tenant.schema, GLOBAL_SEARCH_TABLE)} WHERE "doctype" = $1`, [cstr(doc.name)]);
}

/** For every DocType (the frappe app's `docEvents['*']`): a saved document's row is written, a deleted one's removed. */
export const globalSearchIndex: DocController = {
  on_change: onSave,
  on_trash: onDelete,
};

/** For DocType itself: marking or unmarking `in_global_search` fields rebuilds that DocType's rows. */
export const globalSearchDoctypeIndex: DocController = {
  on_change: onDoctypeChange,
  after_delete: onDoctypeDelete,
};
