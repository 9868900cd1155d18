import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRole, createUser } from '../platform/helpers';
import { DATETIME_RE, expectError, serverMessages } from '../record-api/helpers';
import { createDoctype } from '../support/doctypes';
import { startTestServer, type TestServer } from '../support/server';
import { book, genre, legacyGet, libraryTenant, method, readOnly } from './helpers';

/** frappe.client.get, get_value and get_single_value over HTTP (frappe/client.py, frappe-wire.md §9). */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const library = () => libraryTenant(() => server.tenant('m'));

/** Every key frappe.client.get returns for a Book (doc.as_dict(): nulls included). */
const BOOK_KEYS = [
  'name',
  'owner',
  'creation',
  'modified',
  'modified_by',
  'docstatus',
  'idx',
  'title',
  'author',
  'pages',
  'price',
  'genre',
  'published',
  'in_print',
  'format',
  'doctype',
  'tags',
].sort();
const TAG_KEYS = [
  'name',
  'owner',
  'creation',
  'modified',
  'modified_by',
  'docstatus',
  'idx',
  'parent',
  'parentfield',
  'parenttype',
  'tag',
  'genre',
  'doctype',
].sort();

describe('frappe.client.get', () => {
  it('returns the whole document with null fields included, rows too', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune', tags: [{ tag: 'classic' }] });
    const res = await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Book', name: b.name } });
    expect(res.status, res.text).toBe(200);
    const doc = res.body.message;
    expect(Object.keys(doc).sort()).toEqual(BOOK_KEYS);
    expect(doc).toMatchObject({
      name: b.name,
      doctype: 'Book',
      title: 'Dune',
      author: null,
      genre: null,
      published: null,
      pages: 0,
      price: 0,
      in_print: 0,
      format: 'Paperback',
      docstatus: 0,
      idx: 0,
      owner: 'Administrator',
    });
    expect(doc.modified).toMatch(DATETIME_RE);
    expect(doc.tags).toHaveLength(1);
    expect(Object.keys(doc.tags[0]).sort()).toEqual(TAG_KEYS);
    expect(doc.tags[0]).toMatchObject({ tag: 'classic', genre: null, parent: b.name, parenttype: 'Book', parentfield: 'tags', idx: 1, doctype: 'Book Tag' });
    // /api/resource leaves nulls out; frappe.client does not
    const resource = await t.call('GET', `/api/resource/Book/${b.name}`);
    expect(resource.body.data).not.toHaveProperty('author');
  });

  it('finds the first match of filters given as a JSON object, as JSON text, or `{}`', async () => {
    const t = await library();
    await book(t, { title: 'Dune', author: 'Herbert' });
    const emma = await book(t, { title: 'Emma', author: 'Austen' });
    const viaJson = await method(t, 'POST', 'frappe.client.get', { json: { doctype: 'Book', filters: { author: 'Austen' } } });
    expect(viaJson.status, viaJson.text).toBe(200);
    expect(viaJson.body.message.name).toBe(emma.name);
    const viaText = await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Book', filters: JSON.stringify([['author', '=', 'Austen']]) } });
    expect(viaText.body.message).toEqual(viaJson.body.message);
    const anyOne = await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Book', filters: '{}' } });
    expect(anyOne.status).toBe(200);
    expect(['Dune', 'Emma']).toContain(anyOne.body.message.title);
    expectError(await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Book', filters: '{"author": "Nobody"}' } }), 404, 'DoesNotExistError');
  });

  it('without name or filters returns the Single; a missing document is a 404', async () => {
    const t = await library();
    const res = await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Library Settings', name: '', filters: '' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toMatchObject({
      name: 'Library Settings',
      doctype: 'Library Settings',
      library_name: 'City Library',
      max_loans: 5,
      open: 0,
      default_genre: null,
    });
    expectError(await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Book', name: 'missing' } }), 404, 'DoesNotExistError');
    expectError(await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Book' } }), 404, 'DoesNotExistError');
    expectError(await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'No Such Type', name: 'x' } }), 404, 'DoesNotExistError');
  });

  it('answers GET, POST, PUT and DELETE, and refuses PATCH with 403', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune' });
    for (const verb of ['GET', 'POST', 'PUT', 'DELETE']) {
      const res = await method(
        t,
        verb,
        'frappe.client.get',
        verb === 'GET' || verb === 'DELETE' ? { query: { doctype: 'Book', name: b.name } } : { json: { doctype: 'Book', name: b.name } },
      );
      expect(res.status, `${verb} ${res.text}`).toBe(200);
      expect(res.body.message.title).toBe('Dune');
    }
    const patch = await method(t, 'PATCH', 'frappe.client.get', { json: { doctype: 'Book', name: b.name } });
    expectError(patch, 403, 'PermissionError');
    expect(serverMessages(patch.body)).toEqual(['Not permitted']);
  });

  it('refuses a caller without read permission (403) and a child DocType without a valid parent', async () => {
    const t = await library();
    await createRole(t, 'Clerk');
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    const b = await book(t, { title: 'Dune', tags: [{ tag: 'x' }] });
    expectError(await method(t, 'GET', 'frappe.client.get', { auth: clerk.auth, query: { doctype: 'Book', name: b.name } }), 403, 'PermissionError');
    expectError(await method(t, 'GET', 'frappe.client.get', { auth: null, query: { doctype: 'Book', name: b.name } }), 403, 'PermissionError');
    const row = b.tags[0].name;
    expectError(await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Book Tag', name: row } }), 403, 'PermissionError');
    const viaParent = await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Book Tag', name: row, parent: 'Book' } });
    expect(viaParent.status, viaParent.text).toBe(200);
    expect(viaParent.body.message).toMatchObject({ name: row, tag: 'x', genre: null, parent: b.name, doctype: 'Book Tag' });
  });

  it('leaves out fields at a permlevel the caller may not read', async () => {
    const t = await library();
    await createRole(t, 'Reader');
    await createDoctype(t, {
      name: 'Dossier',
      fields: [
        { fieldname: 'title', fieldtype: 'Data' },
        { fieldname: 'secret', fieldtype: 'Data', permlevel: 1 },
      ],
      permissions: [
        { role: 'System Manager', read: 1, write: 1, create: 1 },
        { role: 'Reader', read: 1 },
        { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
      ],
    });
    const reader = await createUser(server, t, 'reader@example.com', ['Reader']);
    const created = await t.call('POST', '/api/resource/Dossier', { json: { title: 'X', secret: 's3' } });
    const name = created.body.data.name;
    const asReader = await method(t, 'GET', 'frappe.client.get', { auth: reader.auth, query: { doctype: 'Dossier', name } });
    expect(asReader.status).toBe(200);
    expect(asReader.body.message).not.toHaveProperty('secret');
    const value = await method(t, 'GET', 'frappe.client.get_value', {
      auth: reader.auth,
      query: { doctype: 'Dossier', fieldname: '["title","secret"]', filters: name },
    });
    expect(value.body.message).toEqual({ title: 'X' });
    const asAdmin = await method(t, 'GET', 'frappe.client.get', { query: { doctype: 'Dossier', name } });
    expect(asAdmin.body.message.secret).toBe('s3');
  });
});

describe('frappe.client.get_value', () => {
  it('returns {field: value} for a field and filters given as an object, JSON text, a name or a list', async () => {
    const t = await library();
    const dune = await book(t, { title: 'Dune', author: 'Herbert', pages: 412 });
    await book(t, { title: 'Emma', author: 'Austen', pages: 300 });
    const forms: unknown[] = [
      { title: 'Dune' },
      JSON.stringify({ title: 'Dune' }),
      dune.name,
      JSON.stringify(dune.name),
      [['pages', '>', 400]],
      JSON.stringify(['title', '=', 'Dune']),
    ];
    for (const filters of forms) {
      const res = await method(t, 'POST', 'frappe.client.get_value', { json: { doctype: 'Book', fieldname: 'author', filters } });
      expect(res.status, `${JSON.stringify(filters)}: ${res.text}`).toBe(200);
      expect(res.body).toEqual({ message: { author: 'Herbert' } });
    }
  });

  it('reads a JSON list of fields; `[]` or no fieldname reads name', async () => {
    const t = await library();
    const dune = await book(t, { title: 'Dune', author: 'Herbert', pages: 412 });
    const two = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname: '["title","pages"]', filters: dune.name } });
    expect(two.body).toEqual({ message: { title: 'Dune', pages: 412 } });
    const empty = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname: '[]', filters: dune.name } });
    expect(empty.body).toEqual({ message: { name: dune.name } });
    const none = await method(t, 'POST', 'frappe.client.get_value', { json: { doctype: 'Book', filters: { title: 'Dune' } } });
    expect(none.body).toEqual({ message: { name: dune.name } });
    const nulls = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname: '["genre","published"]', filters: dune.name } });
    expect(nulls.body).toEqual({ message: { genre: null, published: null } });
  });

  it('as_dict false (JSON) gives a scalar for one field and a list for several; a query-string "false" still gives a dict', async () => {
    const t = await library();
    const dune = await book(t, { title: 'Dune', author: 'Herbert', pages: 412 });
    const scalar = await method(t, 'POST', 'frappe.client.get_value', { json: { doctype: 'Book', fieldname: 'pages', filters: dune.name, as_dict: false } });
    expect(scalar.body).toEqual({ message: 412 });
    const list = await method(t, 'POST', 'frappe.client.get_value', {
      json: { doctype: 'Book', fieldname: ['title', 'pages'], filters: dune.name, as_dict: 0 },
    });
    expect(list.body).toEqual({ message: ['Dune', 412] });
    const truthy = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname: 'pages', filters: dune.name, as_dict: 'false' } });
    expect(truthy.body).toEqual({ message: { pages: 412 } });
    for (const asDict of ['true', 'True', '1']) {
      const res = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname: 'pages', filters: dune.name, as_dict: asDict } });
      expect(res.body).toEqual({ message: { pages: 412 } });
    }
  });

  it('no matching row: {} as a dict, an empty body as a scalar', async () => {
    const t = await library();
    await book(t, { title: 'Dune' });
    const dict = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname: 'title', filters: 'missing' } });
    expect(dict.status).toBe(200);
    expect(dict.body).toEqual({ message: {} });
    const scalar = await method(t, 'POST', 'frappe.client.get_value', { json: { doctype: 'Book', fieldname: 'title', filters: 'missing', as_dict: false } });
    expect(scalar.status).toBe(200);
    expect(scalar.body).toEqual({});
  });

  it("serves the Python client's GET /?cmd=…&filters=null (first row) and a json.dumps'd name", async () => {
    const t = await library();
    const dune = await book(t, { title: 'Dune', author: 'Herbert' });
    const res = await legacyGet(t, 'frappe.client.get_value', { doctype: 'Book', fieldname: 'author', filters: 'null' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ message: { author: 'Herbert' } });
    const byName = await legacyGet(t, 'frappe.client.get_value', { doctype: 'Book', fieldname: 'title', filters: JSON.stringify(dune.name) });
    expect(byName.body).toEqual({ message: { title: 'Dune' } });
  });

  it('refuses sub-queries, functions and unknown fields in fieldname or filters with 417, never 5xx', async () => {
    const t = await library();
    const dune = await book(t, { title: 'Dune' });
    const hostileFields = [
      '(select (password) from(__Auth) order by name desc limit 1)',
      '(select password from __Auth)',
      'title from "tabBook"; drop table "tabBook"; --',
      '["title", "version()"]',
      'pg_sleep(1)',
      'no_such_field',
    ];
    for (const fieldname of hostileFields) {
      const res = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname, filters: dune.name } });
      expect(res.status, `${fieldname}: ${res.text}`).toBe(417);
      expect(res.body.exc_type).toBe('DataError');
      expect(typeof res.body.exc).toBe('string');
    }
    const hostileFilters = [
      { 'name; drop table x': 1 },
      [['title', 'in (select 1)', 'x']],
      { title: ['=', { $gt: 1 }] },
      [['__Auth', 'password', 'like', '%']],
    ];
    for (const filters of hostileFilters) {
      const res = await method(t, 'POST', 'frappe.client.get_value', { json: { doctype: 'Book', fieldname: 'title', filters } });
      expect(res.status, `${JSON.stringify(filters)}: ${res.text}`).toBe(417);
    }
    // text that is not JSON is a name, as Frappe's get_safe_filters makes it
    const notJson = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname: 'title', filters: '[[' } });
    expect(notJson.status).toBe(200);
    expect(notJson.body).toEqual({ message: {} });
    expect((await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book', fieldname: 'title', filters: dune.name } })).body).toEqual({
      message: { title: 'Dune' },
    });
  });

  it('needs read permission: 403 "No permission for <doctype>"', async () => {
    const t = await library();
    await createRole(t, 'Clerk');
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    await book(t, { title: 'Dune' });
    const res = await method(t, 'GET', 'frappe.client.get_value', { auth: clerk.auth, query: { doctype: 'Book', fieldname: 'title' } });
    expectError(res, 403, 'PermissionError');
    expect(serverMessages(res.body)).toEqual(['No permission for Book']);
    expect(res.body._error_message).toBe('No permission for Book');
  });

  it('reads only rows the caller may read (if_owner)', async () => {
    const t = await library();
    await createRole(t, 'Member');
    await createDoctype(t, {
      name: 'Diary',
      fields: [{ fieldname: 'entry', fieldtype: 'Data' }],
      permissions: [
        { role: 'System Manager', read: 1, write: 1, create: 1 },
        { role: 'Member', read: 1, write: 1, create: 1, if_owner: 1 },
      ],
    });
    const ann = await createUser(server, t, 'ann@example.com', ['Member']);
    const bob = await createUser(server, t, 'bob@example.com', ['Member']);
    const mine = await t.call('POST', '/api/resource/Diary', { auth: ann.auth, json: { entry: 'ann wrote this' } });
    expect(mine.status).toBe(200);
    const asBob = await method(t, 'GET', 'frappe.client.get_value', { auth: bob.auth, query: { doctype: 'Diary', fieldname: 'entry', filters: 'null' } });
    expect(asBob.body).toEqual({ message: {} });
    const asAnn = await method(t, 'GET', 'frappe.client.get_value', { auth: ann.auth, query: { doctype: 'Diary', fieldname: 'entry', filters: 'null' } });
    expect(asAnn.body).toEqual({ message: { entry: 'ann wrote this' } });
    expectError(
      await method(t, 'GET', 'frappe.client.get', { auth: bob.auth, query: { doctype: 'Diary', name: mine.body.data.name } }),
      403,
      'PermissionError',
    );
  });

  it('reads a Single, with or without a name filter', async () => {
    const t = await library();
    const g = await genre(t, 'Poetry');
    expect((await t.call('PUT', '/api/resource/Library Settings/Library Settings', { json: { max_loans: 7, default_genre: g } })).status).toBe(200);
    const plain = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Library Settings', fieldname: 'max_loans' } });
    expect(plain.body).toEqual({ message: { max_loans: 7 } });
    const named = await method(t, 'GET', 'frappe.client.get_value', {
      query: { doctype: 'Library Settings', fieldname: '["max_loans","default_genre","open"]', filters: 'Library Settings' },
    });
    expect(named.body).toEqual({ message: { max_loans: 7, default_genre: g, open: 0 } });
    const other = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Library Settings', fieldname: 'max_loans', filters: 'Elsewhere' } });
    expect(other.body).toEqual({ message: {} });
    const scalar = await method(t, 'POST', 'frappe.client.get_value', { json: { doctype: 'Library Settings', fieldname: 'library_name', as_dict: false } });
    expect(scalar.body).toEqual({ message: 'City Library' });
    const hostile = await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Library Settings', fieldname: '(select 1)' } });
    expectError(hostile, 417, 'DataError');
  });

  it('reads a child table through its parent DocType', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune', tags: [{ tag: 'sand' }] });
    const res = await method(t, 'GET', 'frappe.client.get_value', {
      query: { doctype: 'Book Tag', fieldname: 'tag', filters: JSON.stringify({ parent: b.name }), parent: 'Book' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ message: { tag: 'sand' } });
    expectError(await method(t, 'GET', 'frappe.client.get_value', { query: { doctype: 'Book Tag', fieldname: 'tag' } }), 403, 'PermissionError');
  });
});

describe('frappe.client.get_single_value', () => {
  it('returns the typed value, the default when never saved', async () => {
    const t = await library();
    const fresh = await method(t, 'GET', 'frappe.client.get_single_value', { query: { doctype: 'Library Settings', field: 'max_loans' } });
    expect(fresh.body).toEqual({ message: 5 });
    await t.call('PUT', '/api/resource/Library Settings/Library Settings', { json: { open: 1, library_name: 'Town Library', max_loans: 9 } });
    const values = await Promise.all(
      ['open', 'library_name', 'max_loans', 'default_genre'].map((field) =>
        method(t, 'GET', 'frappe.client.get_single_value', { query: { doctype: 'Library Settings', field } }),
      ),
    );
    // an unset Link reads as "" (Frappe casts by fieldtype: cstr(None))
    expect(values.map((r) => r.body)).toEqual([{ message: 1 }, { message: 'Town Library' }, { message: 9 }, { message: '' }]);
  });

  it('refuses an unknown field (417), a DocType that is not a Single (417) and a caller without read (403)', async () => {
    const t = await library();
    expectError(await method(t, 'GET', 'frappe.client.get_single_value', { query: { doctype: 'Library Settings', field: 'nope' } }), 417, 'InvalidColumnName');
    expectError(
      await method(t, 'GET', 'frappe.client.get_single_value', { query: { doctype: 'Library Settings', field: '(select 1)' } }),
      417,
      'InvalidColumnName',
    );
    expectError(await method(t, 'GET', 'frappe.client.get_single_value', { query: { doctype: 'Book', field: 'title' } }), 417, 'ValidationError');
    await createRole(t, 'Clerk');
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    const res = await method(t, 'GET', 'frappe.client.get_single_value', { auth: clerk.auth, query: { doctype: 'Library Settings', field: 'max_loans' } });
    expectError(res, 403, 'PermissionError');
    expect(serverMessages(res.body)).toEqual(['No permission for Library Settings']);
  });

  it('a role that may read the Single may read its values', async () => {
    const t = await library();
    await createRole(t, 'Clerk');
    await createDoctype(t, {
      name: 'Desk Settings',
      issingle: 1,
      fields: [{ fieldname: 'greeting', fieldtype: 'Data', default: 'hi' }],
      permissions: [{ role: 'System Manager', read: 1, write: 1, create: 1 }, readOnly('Clerk')],
    });
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    const res = await method(t, 'GET', 'frappe.client.get_single_value', { auth: clerk.auth, query: { doctype: 'Desk Settings', field: 'greeting' } });
    expect(res.body).toEqual({ message: 'hi' });
  });
});
