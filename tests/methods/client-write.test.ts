import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRole, createUser } from '../platform/helpers';
import { DATETIME_RE, expectError, fetchDoc, HASH_RE, listNames, serverMessages, tableCount } from '../record-api/helpers';
import { createDoctype } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { book, genre, legacyPost, libraryTenant, method, readOnly } from './helpers';

/**
 * The writing frappe.client methods over HTTP: set_value, insert, insert_many, save, submit,
 * cancel, delete and bulk_update (frappe/client.py; frappe-wire.md §9, §4.3, §4.4, §13.3, §13.4).
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const library = () => libraryTenant(() => server.tenant('w'));

async function getFull(t: TestTenant, doctype: string, name: string): Promise<Record<string, any>> {
  const res = await method(t, 'GET', 'frappe.client.get', { query: { doctype, name } });
  if (res.status !== 200) throw new Error(`get failed: ${res.text}`);
  return res.body.message;
}

/** A Loan, submitted (docstatus 1). */
async function submittedLoan(t: TestTenant): Promise<Record<string, any>> {
  const b = await book(t, { title: 'Dune' });
  const loan = await t.call('POST', '/api/resource/Loan', { json: { book: b.name, borrower: 'ann', docstatus: 1 } });
  if (loan.status !== 200) throw new Error(loan.text);
  return loan.body.data;
}

describe('verbs', () => {
  it('write methods refuse GET and PATCH with 403 "Not permitted"; delete refuses PUT', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    const writes = ['set_value', 'insert', 'insert_many', 'save', 'submit', 'cancel', 'bulk_update', 'rename_doc'];
    for (const name of writes) {
      for (const verb of ['GET', 'PATCH', 'DELETE']) {
        const res = await method(t, verb, `frappe.client.${name}`, { query: { doctype: 'Book', name: b.name } });
        expectError(res, 403, 'PermissionError');
        expect(serverMessages(res.body)).toEqual(['Not permitted']);
      }
    }
    for (const verb of ['GET', 'PUT', 'PATCH']) {
      expectError(await method(t, verb, 'frappe.client.delete', { query: { doctype: 'Book', name: b.name } }), 403, 'PermissionError');
    }
    expect((await fetchDoc(t, 'Book', b.name)).title).toBe('Dune');
  });

  it('Guest is refused every method with 403', async () => {
    const t = await library();
    for (const name of ['get', 'get_value', 'set_value', 'insert', 'delete']) {
      expectError(await method(t, 'POST', `frappe.client.${name}`, { auth: null, json: { doctype: 'Book' } }), 403, 'PermissionError');
    }
  });
});

describe('frappe.client.set_value', () => {
  it('sets one field and returns the whole document with nulls (JSON body, as frappe-js-sdk sends it)', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    const res = await method(t, 'POST', 'frappe.client.set_value', { json: { doctype: 'Book', name: b.name, fieldname: 'author', value: 'Herbert' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toMatchObject({ name: b.name, doctype: 'Book', title: 'Dune', author: 'Herbert', genre: null, published: null, tags: [] });
    expect(res.body.message.modified).toMatch(DATETIME_RE);
    expect(res.body.message.modified).not.toBe(b.modified);
    expect((await fetchDoc(t, 'Book', b.name)).author).toBe('Herbert');
  });

  it('takes several values as an object (js-sdk) or as JSON text in fieldname (form, PUT)', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    const asObject = await method(t, 'POST', 'frappe.client.set_value', {
      json: { doctype: 'Book', name: b.name, fieldname: { author: 'Herbert', pages: 412 } },
    });
    expect(asObject.body.message).toMatchObject({ author: 'Herbert', pages: 412 });
    const asText = await method(t, 'PUT', 'frappe.client.set_value', {
      form: { doctype: 'Book', name: b.name, fieldname: JSON.stringify({ pages: 500, format: 'Hardcover' }) },
    });
    expect(asText.status, asText.text).toBe(200);
    expect(asText.body.message).toMatchObject({ author: 'Herbert', pages: 500, format: 'Hardcover' });
  });

  it('takes the Python client\'s POST / form; "True"/"False" set a Check, text is coerced by fieldtype', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    const on = await legacyPost(t, 'frappe.client.set_value', { doctype: 'Book', name: b.name, fieldname: 'in_print', value: 'True' });
    expect(on.status, on.text).toBe(200);
    expect(on.body.message.in_print).toBe(1);
    const off = await legacyPost(t, 'frappe.client.set_value', { doctype: 'Book', name: b.name, fieldname: 'in_print', value: 'False' });
    expect(off.body.message.in_print).toBe(0);
    const pages = await legacyPost(t, 'frappe.client.set_value', { doctype: 'Book', name: b.name, fieldname: 'pages', value: '412' });
    expect(pages.body.message.pages).toBe(412);
    const price = await legacyPost(t, 'frappe.client.set_value', { doctype: 'Book', name: b.name, fieldname: 'price', value: '9.5' });
    expect(price.body.message.price).toBe(9.5);
    expectError(await legacyPost(t, 'frappe.client.set_value', { doctype: 'Book', name: b.name, fieldname: 'pages', value: 'None' }), 417, 'ValidationError');
    expectError(
      await legacyPost(t, 'frappe.client.set_value', { doctype: 'Book', name: b.name, fieldname: 'format', value: 'Scroll' }),
      417,
      'ValidationError',
    );
    // no value: the field is emptied, as Frappe's {fieldname: ""}
    const cleared = await legacyPost(t, 'frappe.client.set_value', { doctype: 'Book', name: b.name, fieldname: 'pages' });
    expect(cleared.body.message.pages).toBe(0);
  });

  it('refuses standard fields with 417 "Cannot edit standard fields", also as keys of a dict', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    for (const fieldname of ['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus', 'idx', 'doctype', 'parent', 'parentfield', 'parenttype']) {
      const res = await method(t, 'POST', 'frappe.client.set_value', { json: { doctype: 'Book', name: b.name, fieldname, value: '1' } });
      expectError(res, 417, 'ValidationError');
      expect(serverMessages(res.body)).toEqual(['Cannot edit standard fields']);
    }
    const dict = await method(t, 'POST', 'frappe.client.set_value', { json: { doctype: 'Book', name: b.name, fieldname: { title: 'X', docstatus: 1 } } });
    expectError(dict, 417, 'ValidationError');
    expect((await fetchDoc(t, 'Book', b.name)).title).toBe('Dune');
  });

  it('a child row is changed through its parent, and the parent comes back', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune', tags: [{ tag: 'a' }, { tag: 'b' }] });
    const row = b.tags[1].name;
    const res = await method(t, 'POST', 'frappe.client.set_value', { json: { doctype: 'Book Tag', name: row, fieldname: 'tag', value: 'bee' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message.doctype).toBe('Book');
    expect(res.body.message.name).toBe(b.name);
    expect(res.body.message.tags.map((r: any) => [r.name, r.tag])).toEqual([
      [b.tags[0].name, 'a'],
      [row, 'bee'],
    ]);
    expect(res.body.message.modified).not.toBe(b.modified);
  });

  it('a missing document is a 404; a caller who may only read gets 403', async () => {
    const t = await library();
    expectError(
      await method(t, 'POST', 'frappe.client.set_value', { json: { doctype: 'Book', name: 'nope', fieldname: 'title', value: 'x' } }),
      404,
      'DoesNotExistError',
    );
    await createRole(t, 'Clerk');
    await createDoctype(t, {
      name: 'Pamphlet',
      fields: [{ fieldname: 'title', fieldtype: 'Data' }],
      permissions: [{ role: 'System Manager', read: 1, write: 1, create: 1 }, readOnly('Clerk')],
    });
    const p = await t.call('POST', '/api/resource/Pamphlet', { json: { title: 'A' } });
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    expectError(
      await method(t, 'POST', 'frappe.client.set_value', {
        auth: clerk.auth,
        json: { doctype: 'Pamphlet', name: p.body.data.name, fieldname: 'title', value: 'B' },
      }),
      403,
      'PermissionError',
    );
  });
});

describe('frappe.client.insert', () => {
  it('inserts a document given as an object or as JSON text, and returns it with nulls', async () => {
    const t = await library();
    const res = await method(t, 'POST', 'frappe.client.insert', { json: { doc: { doctype: 'Book', title: 'Dune', tags: [{ tag: 'sand' }] } } });
    expect(res.status, res.text).toBe(200);
    const doc = res.body.message;
    expect(doc.name).toMatch(HASH_RE);
    expect(doc).toMatchObject({ doctype: 'Book', title: 'Dune', author: null, published: null, pages: 0, docstatus: 0, owner: 'Administrator' });
    expect(doc.tags[0]).toMatchObject({ tag: 'sand', genre: null, parent: doc.name, parenttype: 'Book', parentfield: 'tags' });
    const text = await method(t, 'PUT', 'frappe.client.insert', { form: { doc: JSON.stringify({ doctype: 'Book', title: 'Emma' }) } });
    expect(text.status, text.text).toBe(200);
    expect(text.body.message.title).toBe('Emma');
    expect((await listNames(t, 'Book')).length).toBe(2);
  });

  it('a child row needs parenttype, parent and parentfield, and then returns the parent', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune', tags: [{ tag: 'a' }] });
    const bare = await method(t, 'POST', 'frappe.client.insert', { json: { doc: { doctype: 'Book Tag', tag: 'b' } } });
    expectError(bare, 417, 'ValidationError');
    expect(serverMessages(bare.body)).toEqual(['Parenttype, Parent and Parentfield are required to insert a child record']);
    const res = await method(t, 'POST', 'frappe.client.insert', {
      json: { doc: { doctype: 'Book Tag', tag: 'b', parent: b.name, parenttype: 'Book', parentfield: 'tags' } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toMatchObject({ doctype: 'Book', name: b.name });
    expect(res.body.message.tags.map((r: any) => r.tag)).toEqual(['a', 'b']);
  });

  it('refuses a doc without doctype, malformed JSON and an unknown DocType', async () => {
    const t = await library();
    expectError(await method(t, 'POST', 'frappe.client.insert', { json: { doc: { title: 'x' } } }), 417, 'ValidationError');
    expectError(await method(t, 'POST', 'frappe.client.insert', { form: { doc: '{"doctype": "Book", ' } }), 417, 'ValidationError');
    expectError(await method(t, 'POST', 'frappe.client.insert', { form: { doc: '[1, 2]' } }), 417, 'ValidationError');
    expectError(await method(t, 'POST', 'frappe.client.insert', { json: { doc: { doctype: 'Nope' } } }), 404, 'DoesNotExistError');
    expectError(await method(t, 'POST', 'frappe.client.insert', { json: {} }), 417, 'ValidationError');
  });
});

describe('frappe.client.insert_many', () => {
  it('inserts documents and child rows in order; a child row answers its parent name', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    const docs = [
      { doctype: 'Genre', genre_name: 'Poetry' },
      { doctype: 'Book Tag', tag: 'one', parent: b.name, parenttype: 'Book', parentfield: 'tags' },
      { doctype: 'Book', title: 'Emma' },
      { doctype: 'Book Tag', tag: 'two', parent: b.name, parenttype: 'Book', parentfield: 'tags' },
    ];
    const res = await method(t, 'POST', 'frappe.client.insert_many', { json: { docs } });
    expect(res.status, res.text).toBe(200);
    const names = res.body.message;
    expect(names).toHaveLength(4);
    expect(names[0]).toBe('Poetry');
    expect(names[1]).toBe(b.name);
    expect(names[2]).toMatch(HASH_RE);
    expect(names[3]).toBe(b.name);
    expect((await fetchDoc(t, 'Book', b.name)).tags.map((r: any) => r.tag)).toEqual(['one', 'two']);
    const text = await method(t, 'POST', 'frappe.client.insert_many', { form: { docs: JSON.stringify([{ doctype: 'Genre', genre_name: 'Drama' }]) } });
    expect(text.body).toEqual({ message: ['Drama'] });
  });

  it('refuses more than 200 documents before inserting any', async () => {
    const t = await library();
    const docs = Array.from({ length: 201 }, (_, i) => ({ doctype: 'Genre', genre_name: `G${i}` }));
    const res = await method(t, 'POST', 'frappe.client.insert_many', { json: { docs } });
    expectError(res, 417, 'ValidationError');
    expect(serverMessages(res.body)).toEqual(['Only 200 inserts allowed in one request']);
    expect(await tableCount(server, t, 'Genre')).toBe(0);
    const ok = await method(t, 'POST', 'frappe.client.insert_many', { json: { docs: docs.slice(0, 200) } });
    expect(ok.status, ok.text).toBe(200);
    expect(await tableCount(server, t, 'Genre')).toBe(200);
  });

  it('is one transaction: one failing document inserts nothing', async () => {
    const t = await library();
    const docs = [
      { doctype: 'Genre', genre_name: 'Poetry' },
      { doctype: 'Book', title: 'Emma' },
      { doctype: 'Book', author: 'no title' },
    ];
    expectError(await method(t, 'POST', 'frappe.client.insert_many', { json: { docs } }), 417, 'MandatoryError');
    expect(await tableCount(server, t, 'Genre')).toBe(0);
    expect(await tableCount(server, t, 'Book')).toBe(0);
    const duplicate = await method(t, 'POST', 'frappe.client.insert_many', {
      json: {
        docs: [
          { doctype: 'Genre', genre_name: 'Poetry' },
          { doctype: 'Genre', genre_name: 'Poetry' },
        ],
      },
    });
    expectError(duplicate, 409, 'DuplicateEntryError');
    expect(await tableCount(server, t, 'Genre')).toBe(0);
    expectError(await method(t, 'POST', 'frappe.client.insert_many', { json: { docs: { doctype: 'Genre' } } }), 417, 'ValidationError');
    expectError(await method(t, 'POST', 'frappe.client.insert_many', { json: { docs: ['Poetry'] } }), 417, 'ValidationError');
  });
});

describe('frappe.client.save', () => {
  it('saves the full document read back from get (POST works, GET is refused)', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune', author: 'Herbert', tags: [{ tag: 'a' }] });
    const doc = await getFull(t, 'Book', b.name);
    expectError(await method(t, 'GET', 'frappe.client.save', { query: { doc: JSON.stringify(doc) } }), 403, 'PermissionError');
    const res = await method(t, 'POST', 'frappe.client.save', { json: { doc: { ...doc, pages: 412, tags: [...doc.tags, { tag: 'b' }] } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toMatchObject({ name: b.name, title: 'Dune', author: 'Herbert', pages: 412, genre: null });
    expect(res.body.message.tags.map((r: any) => r.tag)).toEqual(['a', 'b']);
    expect(res.body.message.modified).not.toBe(doc.modified);
    const text = await method(t, 'PUT', 'frappe.client.save', { form: { doc: JSON.stringify({ ...res.body.message, title: 'Dune Messiah' }) } });
    expect(text.status, text.text).toBe(200);
    expect(text.body.message.title).toBe('Dune Messiah');
  });

  it('needs `modified`: missing or stale is a 417 TimestampMismatchError', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    const doc = await getFull(t, 'Book', b.name);
    const { modified: _m, ...withoutModified } = doc;
    expectError(await method(t, 'POST', 'frappe.client.save', { json: { doc: withoutModified } }), 417, 'TimestampMismatchError');
    const saved = await method(t, 'POST', 'frappe.client.save', { json: { doc: { ...doc, pages: 1 } } });
    expect(saved.status).toBe(200);
    const stale = await method(t, 'POST', 'frappe.client.save', { json: { doc: { ...doc, pages: 2 } } });
    expectError(stale, 417, 'TimestampMismatchError');
    expect((await fetchDoc(t, 'Book', b.name)).pages).toBe(1);
  });

  it('replaces the document: fields and rows left out of it are emptied', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune', author: 'Herbert', pages: 10, tags: [{ tag: 'a' }] });
    const doc = await getFull(t, 'Book', b.name);
    const { author: _a, pages: _p, tags: _t, ...rest } = doc;
    const res = await method(t, 'POST', 'frappe.client.save', { json: { doc: rest } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toMatchObject({ title: 'Dune', author: null, pages: 0, tags: [] });
    expect(await tableCount(server, t, 'Book Tag')).toBe(0);
  });

  it('saves a Single the same way (modified checked)', async () => {
    const t = await library();
    const doc = (await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Library Settings' } })).body.message;
    const res = await method(t, 'POST', 'frappe.client.save', { json: { doc: { ...doc, max_loans: 3 } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toMatchObject({ name: 'Library Settings', max_loans: 3, library_name: 'City Library', default_genre: null });
    expectError(await method(t, 'POST', 'frappe.client.save', { json: { doc: { ...doc, max_loans: 4 } } }), 417, 'TimestampMismatchError');
    const again = await method(t, 'POST', 'frappe.client.save', { json: { doc: { ...res.body.message, max_loans: 4 } } });
    expect(again.body.message.max_loans).toBe(4);
  });

  it('a name that does not exist is a 404; a document without a name is inserted', async () => {
    const t = await library();
    expectError(
      await method(t, 'POST', 'frappe.client.save', { json: { doc: { doctype: 'Book', name: 'nope', title: 'x', modified: '2024-01-01 00:00:00' } } }),
      404,
      'DoesNotExistError',
    );
    const created = await method(t, 'POST', 'frappe.client.save', { json: { doc: { doctype: 'Book', title: 'New' } } });
    expect(created.status, created.text).toBe(200);
    expect(created.body.message.name).toMatch(HASH_RE);
    expect(created.body.message.author).toBeNull();
  });
});

describe('frappe.client.submit and cancel', () => {
  it('submit takes the full document (js-sdk object) and returns it submitted', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    const loan = await t.call('POST', '/api/resource/Loan', { json: { book: b.name, borrower: 'ann' } });
    const doc = await getFull(t, 'Loan', loan.body.data.name);
    const res = await method(t, 'POST', 'frappe.client.submit', { json: { doc } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toMatchObject({ name: doc.name, docstatus: 1, book: b.name, remark: null, amended_from: null });
    const { modified: _m, ...withoutModified } = doc;
    expectError(await method(t, 'POST', 'frappe.client.submit', { json: { doc: withoutModified } }), 417, 'TimestampMismatchError');
  });

  it("submit accepts the Python client's doclist form", async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    const loan = await t.call('POST', '/api/resource/Loan', { json: { book: b.name } });
    const doc = await getFull(t, 'Loan', loan.body.data.name);
    const res = await legacyPost(t, 'frappe.client.submit', { doclist: JSON.stringify(doc) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message.docstatus).toBe(1);
  });

  it('cancel returns the cancelled document (Frappe returns doc.as_dict()); a draft cannot be cancelled', async () => {
    const t = await library();
    const loan = await submittedLoan(t);
    const res = await method(t, 'POST', 'frappe.client.cancel', { json: { doctype: 'Loan', name: loan.name } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toMatchObject({ name: loan.name, doctype: 'Loan', docstatus: 2, remark: null });
    const again = await legacyPost(t, 'frappe.client.cancel', { doctype: 'Loan', name: loan.name });
    expectError(again, 417, 'ValidationError');
    const draft = await t.call('POST', '/api/resource/Loan', { json: { borrower: 'bob' } });
    expectError(await method(t, 'PUT', 'frappe.client.cancel', { json: { doctype: 'Loan', name: draft.body.data.name } }), 417, 'DocstatusTransitionError');
    expectError(await method(t, 'POST', 'frappe.client.cancel', { json: { doctype: 'Loan', name: 'nope' } }), 404, 'DoesNotExistError');
  });
});

describe('frappe.client.delete', () => {
  it('deletes with DELETE (query) or POST (the Python form) and answers {}', async () => {
    const t = await library();
    const a = await book(t, { title: 'A' });
    const b = await book(t, { title: 'B' });
    const res = await method(t, 'DELETE', 'frappe.client.delete', { query: { doctype: 'Book', name: a.name } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({});
    const legacy = await legacyPost(t, 'frappe.client.delete', { doctype: 'Book', name: b.name });
    expect(legacy.status, legacy.text).toBe(200);
    expect(legacy.body).toEqual({});
    expect(await listNames(t, 'Book')).toEqual([]);
    expectError(await method(t, 'DELETE', 'frappe.client.delete', { query: { doctype: 'Book', name: a.name } }), 404, 'DoesNotExistError');
  });

  it('a child row is removed through its parent; deleting it again is a 404', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune', tags: [{ tag: 'a' }, { tag: 'b' }] });
    const row = b.tags[0].name;
    const res = await method(t, 'POST', 'frappe.client.delete', { json: { doctype: 'Book Tag', name: row } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({});
    const parent = await fetchDoc(t, 'Book', b.name);
    expect(parent.tags.map((r: any) => r.tag)).toEqual(['b']);
    expect(parent.modified).not.toBe(b.modified);
    expectError(await method(t, 'POST', 'frappe.client.delete', { json: { doctype: 'Book Tag', name: row } }), 404, 'DoesNotExistError');
  });

  it('refuses a submitted document and a linked one (417)', async () => {
    const t = await library();
    const loan = await submittedLoan(t);
    expectError(await method(t, 'POST', 'frappe.client.delete', { json: { doctype: 'Loan', name: loan.name } }), 417, 'ValidationError');
    expectError(await method(t, 'POST', 'frappe.client.delete', { json: { doctype: 'Book', name: loan.book } }), 417, 'LinkExistsError');
  });
});

describe('frappe.client.bulk_update', () => {
  it("updates each document (the Python client's POST / form with docs=<json>)", async () => {
    const t = await library();
    const a = await book(t, { title: 'A' });
    const b = await book(t, { title: 'B' });
    const docs = [
      { doctype: 'Book', docname: a.name, author: 'Ann', pages: 10 },
      { doctype: 'Book', docname: b.name, author: 'Bob', flags: { ignore_permissions: true } },
    ];
    const res = await legacyPost(t, 'frappe.client.bulk_update', { docs: JSON.stringify(docs) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ message: { failed_docs: [] } });
    expect(await fetchDoc(t, 'Book', a.name)).toMatchObject({ title: 'A', author: 'Ann', pages: 10 });
    expect(await fetchDoc(t, 'Book', b.name)).toMatchObject({ title: 'B', author: 'Bob' });
  });

  it('collects failures as failed_docs {doc, exc} and keeps the other updates', async () => {
    const t = await library();
    const a = await book(t, { title: 'A' });
    const b = await book(t, { title: 'B' });
    const docs = [
      { doctype: 'Book', docname: a.name, author: 'Ann' },
      { doctype: 'Book', docname: 'missing', author: 'Nobody' },
      { doctype: 'Book', docname: b.name, format: 'Scroll', author: 'Bob' },
      { docname: b.name, author: 'no doctype' },
      { doctype: 'Book', docname: b.name, pages: 7, flags: { x: 1 } },
    ];
    const res = await method(t, 'POST', 'frappe.client.bulk_update', { json: { docs } });
    expect(res.status, res.text).toBe(200);
    const failed = res.body.message.failed_docs;
    expect(failed.map((f: any) => f.doc)).toEqual([docs[1], docs[2], docs[3]]);
    expect(failed[0].exc).toBe('frappe.exceptions.DoesNotExistError: Book missing not found');
    expect(failed[1].exc).toMatch(/^frappe\.exceptions\.ValidationError: Format cannot be "Scroll"/);
    expect(failed[2].exc).toMatch(/^frappe\.exceptions\.ValidationError: doctype is required/);
    expect(await fetchDoc(t, 'Book', a.name)).toMatchObject({ author: 'Ann' });
    // the failed update of b left nothing behind; the later one applied
    const bAfter = await fetchDoc(t, 'Book', b.name);
    expect(bAfter).toMatchObject({ pages: 7, format: 'Paperback' });
    expect(bAfter).not.toHaveProperty('author');
  });

  it('refuses docs that are not a list of objects (417)', async () => {
    const t = await library();
    expectError(await method(t, 'POST', 'frappe.client.bulk_update', { form: { docs: '{"doctype": "Book"}' } }), 417, 'ValidationError');
    expectError(await method(t, 'POST', 'frappe.client.bulk_update', { form: { docs: 'not json' } }), 417, 'ValidationError');
    expectError(await method(t, 'POST', 'frappe.client.bulk_update', { json: { docs: [1] } }), 417, 'ValidationError');
  });
});

describe('genre names through insert (field autoname)', () => {
  it('insert names a Genre by its field', async () => {
    const t = await library();
    expect(await genre(t, 'Poetry')).toBe('Poetry');
  });
});
