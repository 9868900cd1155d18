import type { CallOptions, CallResult, TestTenant } from '../support/server';
import { ALL_RIGHTS, insert } from '../record-api/helpers';

/**
 * Shared set-up for the frappe.client / frappe.desk.search method tests: a small library domain
 * created at runtime in a fresh tenant.
 *
 *   Genre          field:genre_name                         (renamed by field; linked from everywhere)
 *   Book Tag       child: tag, genre (Link Genre)
 *   Book           hash; title_field title; search_fields "author, genre"; tags (Table Book Tag)
 *   Loan           submittable, hash: book (Link Book), borrower
 *   Library Note   hash: ref_type (Link DocType) + ref_name (Dynamic Link)
 *   Library Settings  Single: library_name, max_loans (Int, default 5), open (Check), default_genre (Link Genre)
 */

export function method(t: TestTenant, verb: string, name: string, options: CallOptions = {}): Promise<CallResult> {
  return t.call(verb, `/api/method/${name}`, options);
}

/** The Python client's legacy RPC: `POST /` with form fields `cmd=<method>&…`. */
export function legacyPost(t: TestTenant, cmd: string, form: Record<string, string>, auth?: string): Promise<CallResult> {
  return t.call('POST', '/', { form: { cmd, ...form }, ...(auth ? { auth } : {}) });
}

/** The Python client's `GET /?cmd=<method>&…`. */
export function legacyGet(t: TestTenant, cmd: string, query: Record<string, string>, auth?: string): Promise<CallResult> {
  return t.call('GET', '/', { query: { cmd, ...query }, ...(auth ? { auth } : {}) });
}

/** POST /api/resource/DocType (System Manager may do everything unless `permissions` is given). */
export async function createDoctype(t: TestTenant, def: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.call('POST', '/api/resource/DocType', { json: { module: 'Custom', permissions: [ALL_RIGHTS], ...def } });
  if (res.status !== 200) throw new Error(`creating DocType ${String(def.name)} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

export async function libraryTenant(create: () => Promise<TestTenant>): Promise<TestTenant> {
  const t = await create();
  await createDoctype(t, {
    name: 'Genre',
    autoname: 'field:genre_name',
    fields: [
      { fieldname: 'genre_name', label: 'Genre Name', fieldtype: 'Data', reqd: 1 },
      { fieldname: 'description', label: 'Description', fieldtype: 'Small Text' },
    ],
  });
  await createDoctype(t, {
    name: 'Book Tag',
    istable: 1,
    fields: [
      { fieldname: 'tag', label: 'Tag', fieldtype: 'Data' },
      { fieldname: 'genre', label: 'Genre', fieldtype: 'Link', options: 'Genre' },
    ],
    permissions: [],
  });
  await createDoctype(t, {
    name: 'Book',
    autoname: 'hash',
    title_field: 'title',
    search_fields: 'author, genre',
    fields: [
      { fieldname: 'title', label: 'Title', fieldtype: 'Data', reqd: 1 },
      { fieldname: 'author', label: 'Author', fieldtype: 'Data' },
      { fieldname: 'pages', label: 'Pages', fieldtype: 'Int' },
      { fieldname: 'price', label: 'Price', fieldtype: 'Currency' },
      { fieldname: 'genre', label: 'Genre', fieldtype: 'Link', options: 'Genre' },
      { fieldname: 'published', label: 'Published', fieldtype: 'Date' },
      { fieldname: 'in_print', label: 'In Print', fieldtype: 'Check' },
      { fieldname: 'format', label: 'Format', fieldtype: 'Select', options: 'Paperback\nHardcover' },
      { fieldname: 'tags', label: 'Tags', fieldtype: 'Table', options: 'Book Tag' },
    ],
  });
  await createDoctype(t, {
    name: 'Loan',
    autoname: 'hash',
    is_submittable: 1,
    fields: [
      { fieldname: 'book', label: 'Book', fieldtype: 'Link', options: 'Book' },
      { fieldname: 'borrower', label: 'Borrower', fieldtype: 'Data' },
      { fieldname: 'remark', label: 'Remark', fieldtype: 'Data', allow_on_submit: 1 },
    ],
  });
  await createDoctype(t, {
    name: 'Library Note',
    autoname: 'hash',
    fields: [
      { fieldname: 'ref_type', label: 'Reference Type', fieldtype: 'Link', options: 'DocType' },
      { fieldname: 'ref_name', label: 'Reference Name', fieldtype: 'Dynamic Link', options: 'ref_type' },
      { fieldname: 'content', label: 'Content', fieldtype: 'Data' },
    ],
  });
  await createDoctype(t, {
    name: 'Library Settings',
    issingle: 1,
    fields: [
      { fieldname: 'library_name', label: 'Library Name', fieldtype: 'Data', default: 'City Library' },
      { fieldname: 'max_loans', label: 'Max Loans', fieldtype: 'Int', default: '5' },
      { fieldname: 'open', label: 'Open', fieldtype: 'Check' },
      { fieldname: 'default_genre', label: 'Default Genre', fieldtype: 'Link', options: 'Genre' },
    ],
  });
  return t;
}

export async function genre(t: TestTenant, name: string, description?: string): Promise<string> {
  const doc = await insert(t, 'Genre', { genre_name: name, ...(description ? { description } : {}) });
  return String(doc.name);
}

export async function book(t: TestTenant, values: Record<string, unknown>): Promise<Record<string, any>> {
  return insert(t, 'Book', values);
}

/** A DocPerm row that only reads (DocPerm's defaults grant write, create and delete too, as in Frappe). */
export function readOnly(role: string): Record<string, unknown> {
  return { role, read: 1, write: 0, create: 0, delete: 0 };
}

export { ALL_RIGHTS };
