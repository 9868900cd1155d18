import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocType, createRole, createUser, expectOk } from '../platform/helpers';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * getdoc's `_link_titles` (Frappe's load.py set_link_titles): `"<DocType>::<name>"` → the title,
 * for the Link and Dynamic Link values of a document and of its child rows, where the linked
 * DocType sets show_title_field_in_link; only documents (and title fields) the caller may read.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(async () => {
  await server.close();
});

const READER = 'LT Reader';
/** May read Books, and no Author at all. */
const BOOK_ONLY = 'LT Book Only';

/** Titles shown in links; a reader may read (and create) only the Authors they own. */
const AUTHOR = {
  name: 'LT Author',
  module: 'Custom',
  autoname: 'hash',
  title_field: 'full_name',
  show_title_field_in_link: 1,
  fields: [{ fieldname: 'full_name', fieldtype: 'Data' }],
  permissions: [
    { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
    { role: READER, read: 1, create: 1, if_owner: 1 },
  ],
};
/** A title field, but not shown in links. */
const PLAIN = {
  name: 'LT Plain',
  module: 'Custom',
  autoname: 'hash',
  title_field: 'label',
  fields: [{ fieldname: 'label', fieldtype: 'Data' }],
  permissions: [{ role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 }],
};
/** Shown in links, but its title is at permlevel 1, which a reader may not read. */
const SECRET = {
  name: 'LT Secret',
  module: 'Custom',
  autoname: 'hash',
  title_field: 'codename',
  show_title_field_in_link: 1,
  fields: [{ fieldname: 'codename', fieldtype: 'Data', permlevel: 1 }],
  permissions: [
    { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
    { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
    { role: READER, read: 1 },
  ],
};
const LINE = {
  name: 'LT Line',
  module: 'Custom',
  istable: 1,
  fields: [
    { fieldname: 'item', fieldtype: 'Data' },
    { fieldname: 'contributor', fieldtype: 'Link', options: 'LT Author' },
  ],
};
const BOOK = {
  name: 'LT Book',
  module: 'Custom',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', fieldtype: 'Data' },
    { fieldname: 'author', fieldtype: 'Link', options: 'LT Author' },
    { fieldname: 'co_author', fieldtype: 'Link', options: 'LT Author' },
    { fieldname: 'plain', fieldtype: 'Link', options: 'LT Plain' },
    { fieldname: 'secret', fieldtype: 'Link', options: 'LT Secret' },
    { fieldname: 'ref_type', fieldtype: 'Link', options: 'DocType' },
    { fieldname: 'ref_name', fieldtype: 'Dynamic Link', options: 'ref_type' },
    { fieldname: 'lines', fieldtype: 'Table', options: 'LT Line' },
    // A reader may not read this field: a title for it would show its value.
    { fieldname: 'reviewer', fieldtype: 'Link', options: 'LT Author', permlevel: 1 },
  ],
  permissions: [
    { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
    { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
    { role: READER, read: 1 },
    { role: BOOK_ONLY, read: 1 },
  ],
};

async function setUp(t: TestTenant): Promise<void> {
  await createRole(t, READER);
  await createRole(t, BOOK_ONLY);
  for (const definition of [AUTHOR, PLAIN, SECRET, LINE, BOOK]) await createDocType(t, definition);
}

async function insert(t: TestTenant, doctype: string, doc: object, auth?: string): Promise<string> {
  const res = await t.call('POST', `/api/resource/${doctype}`, { json: doc, ...(auth ? { auth } : {}) });
  expectOk(res);
  return res.body.data.name as string;
}

async function getdoc(t: TestTenant, doctype: string, name: string, auth?: string): Promise<Record<string, any>> {
  const res = await t.call('GET', '/api/method/frappe.desk.form.load.getdoc', { query: { doctype, name }, ...(auth ? { auth } : {}) });
  expectOk(res);
  return res.body;
}

describe('getdoc _link_titles', () => {
  it('a Link to a DocType with show_title_field_in_link sends its title; a Link to one without sends none', async () => {
    const t = await server.tenant();
    await setUp(t);
    const author = await insert(t, 'LT Author', { full_name: 'Ursula K. Le Guin' });
    const plain = await insert(t, 'LT Plain', { label: 'Not in links' });
    const book = await insert(t, 'LT Book', { title: 'The Dispossessed', author, plain });

    const body = await getdoc(t, 'LT Book', book);
    expect(body._link_titles).toEqual({ [`LT Author::${author}`]: 'Ursula K. Le Guin' });
    expect(body.docs[0]).toMatchObject({ name: book, author, plain });
    expect(body.docinfo).toMatchObject({ doctype: 'LT Book', name: book });
  });

  it('a child row’s Link and a Dynamic Link send their titles too (one entry per linked document)', async () => {
    const t = await server.tenant();
    await setUp(t);
    const [a, b, c] = [
      await insert(t, 'LT Author', { full_name: 'Author A' }),
      await insert(t, 'LT Author', { full_name: 'Author B' }),
      await insert(t, 'LT Author', { full_name: 'Author C' }),
    ];
    const untitled = await insert(t, 'LT Author', {}); // no title: nothing to send for it
    const book = await insert(t, 'LT Book', {
      title: 'Anthology',
      author: a,
      ref_type: 'LT Author',
      ref_name: c,
      lines: [{ item: 'one', contributor: b }, { item: 'two', contributor: a }, { item: 'three', contributor: untitled }, { item: 'four' }],
    });

    const body = await getdoc(t, 'LT Book', book);
    expect(body._link_titles).toEqual({
      [`LT Author::${a}`]: 'Author A',
      [`LT Author::${b}`]: 'Author B',
      [`LT Author::${c}`]: 'Author C',
    });
  });

  it('a linked document the caller may not read, or whose title field they may not read, sends no title', async () => {
    const t = await server.tenant();
    await setUp(t);
    const reader = await createUser(server, t, 'reader@example.com', [READER]);
    const theirs = await insert(t, 'LT Author', { full_name: 'Their Author' }, reader.auth);
    const reviewer = await insert(t, 'LT Author', { full_name: 'Their Reviewer' }, reader.auth);
    const others = await insert(t, 'LT Author', { full_name: 'Someone Else' });
    const secret = await insert(t, 'LT Secret', { codename: 'Nightingale' });
    const book = await insert(t, 'LT Book', {
      title: 'Mixed',
      author: others,
      co_author: theirs,
      secret,
      reviewer,
      lines: [{ item: 'x', contributor: others }],
    });

    // The Administrator reads everything.
    expect((await getdoc(t, 'LT Book', book))._link_titles).toEqual({
      [`LT Author::${others}`]: 'Someone Else',
      [`LT Author::${theirs}`]: 'Their Author',
      [`LT Secret::${secret}`]: 'Nightingale',
      [`LT Author::${reviewer}`]: 'Their Reviewer',
    });
    // The reader: only the Author they own; not another's, not a title at a permlevel they lack,
    // and not one for a Link field they may not read (though they own the Author it names).
    const body = await getdoc(t, 'LT Book', book, reader.auth);
    expect(body.docs[0]).toMatchObject({ author: others, co_author: theirs, secret });
    expect(body.docs[0]).not.toHaveProperty('reviewer');
    expect(body._link_titles).toEqual({ [`LT Author::${theirs}`]: 'Their Author' });
    // The same rule as get_link_title's.
    const direct = await t.call('GET', '/api/method/frappe.desk.search.get_link_title', {
      query: { doctype: 'LT Author', docname: others },
      auth: reader.auth,
    });
    expectOk(direct);
    expect(direct.body.message).toBeUndefined();
  });

  it('a caller who may not read the linked DocType at all gets no title for it', async () => {
    const t = await server.tenant();
    await setUp(t);
    const outsider = await createUser(server, t, 'outsider@example.com', [BOOK_ONLY]);
    const author = await insert(t, 'LT Author', { full_name: 'Hidden Author' });
    const book = await insert(t, 'LT Book', { title: 'Closed', author });

    const body = await getdoc(t, 'LT Book', book, outsider.auth);
    expect(body.docs[0]).toMatchObject({ name: book, author });
    expect(body._link_titles).toEqual({});
  });

  it('sends _link_titles as {} when there is nothing to show, as Frappe does', async () => {
    const t = await server.tenant();
    await setUp(t);
    const plain = await insert(t, 'LT Plain', { label: 'Plain' });
    const bare = await insert(t, 'LT Book', { title: 'No links' });
    const onlyPlain = await insert(t, 'LT Book', { title: 'Plain link', plain, ref_type: 'LT Plain', ref_name: plain });

    for (const name of [bare, onlyPlain]) {
      const body = await getdoc(t, 'LT Book', name);
      expect(body.docs).toHaveLength(1);
      expect(body._link_titles).toEqual({});
    }
  });
});
