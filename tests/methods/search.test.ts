import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRole, createUser } from '../platform/helpers';
import { expectError, insert, serverMessages } from '../record-api/helpers';
import { createDoctype } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { book, genre, legacyGet, libraryTenant, method } from './helpers';

/** frappe.desk.search.search_link: Link field suggestions (frappe/desk/search.py, frappe/tests/test_search.py). */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const library = () => libraryTenant(() => server.tenant('s'));

async function search(t: TestTenant, args: Record<string, string | number>, auth?: string | null): Promise<any[]> {
  const res = await method(t, 'GET', 'frappe.desk.search.search_link', { query: args, ...(auth !== undefined ? { auth } : {}) });
  if (res.status !== 200) throw new Error(`search_link failed: ${res.status} ${res.text}`);
  return res.body.message;
}

describe('frappe.desk.search.search_link', () => {
  it('matches txt anywhere in the name, case-insensitively; names starting with it come first, then by name', async () => {
    const t = await library();
    for (const g of ['Dark Fantasy', 'Fantasy', 'Science Fantasy', 'Fantasy Classics', 'Drama']) await genre(t, g);
    const results = await search(t, { doctype: 'Genre', txt: 'fANT' });
    expect(results).toEqual([
      { value: 'Fantasy', description: '' },
      { value: 'Fantasy Classics', description: '' },
      { value: 'Dark Fantasy', description: '' },
      { value: 'Science Fantasy', description: '' },
    ]);
    const all = await search(t, { doctype: 'Genre', txt: '' });
    expect(all.map((r) => r.value).sort()).toEqual(['Dark Fantasy', 'Drama', 'Fantasy', 'Fantasy Classics', 'Science Fantasy']);
  });

  it('label is the title field, description the search fields joined with ", "; search fields are matched too', async () => {
    const t = await library();
    await genre(t, 'Sci-Fi');
    const dune = await book(t, { title: 'Dune', author: 'Herbert', genre: 'Sci-Fi', format: 'Hardcover' });
    const untitled = await book(t, { title: 'Notes', genre: 'Sci-Fi' });
    expect(await search(t, { doctype: 'Book', txt: 'dune' })).toEqual([{ value: dune.name, label: 'Dune', description: 'Herbert, Sci-Fi' }]);
    expect(await search(t, { doctype: 'Book', txt: 'herb' })).toEqual([{ value: dune.name, label: 'Dune', description: 'Herbert, Sci-Fi' }]);
    expect(await search(t, { doctype: 'Book', txt: 'notes' })).toEqual([{ value: untitled.name, label: 'Notes', description: 'Sci-Fi' }]);
    // fields that are neither the name, the title nor search fields are not searched
    expect(await search(t, { doctype: 'Book', txt: 'Hardcover' })).toEqual([]);
    expect((await search(t, { doctype: 'Book', txt: 'sci-fi' })).map((r) => r.value).sort()).toEqual([dune.name, untitled.name].sort());
  });

  it('treats %, _ and \\ in txt as plain characters', async () => {
    const t = await library();
    for (const g of ['100% Fiction', '100 Fiction', 'a_b', 'axb', 'back\\slash']) await genre(t, g);
    expect((await search(t, { doctype: 'Genre', txt: '%' })).map((r) => r.value)).toEqual(['100% Fiction']);
    expect((await search(t, { doctype: 'Genre', txt: '_' })).map((r) => r.value)).toEqual(['a_b']);
    expect((await search(t, { doctype: 'Genre', txt: '\\' })).map((r) => r.value)).toEqual(['back\\slash']);
    expect(await search(t, { doctype: 'Genre', txt: '\'; drop table "tabGenre"; --' })).toEqual([]);
    expect((await search(t, { doctype: 'Genre', txt: 'Fiction' })).map((r) => r.value)).toEqual(['100 Fiction', '100% Fiction']);
  });

  it('returns page_length results (default 10); a page_length that is not an integer is a 417', async () => {
    const t = await library();
    await method(t, 'POST', 'frappe.client.insert_many', {
      json: { docs: Array.from({ length: 14 }, (_, i) => ({ doctype: 'Genre', genre_name: `Genre ${String(i).padStart(2, '0')}` })) },
    });
    expect(await search(t, { doctype: 'Genre', txt: 'genre' })).toHaveLength(10);
    expect(await search(t, { doctype: 'Genre', txt: 'genre', page_length: 3 })).toHaveLength(3);
    expect(await search(t, { doctype: 'Genre', txt: 'genre', page_length: 0 })).toHaveLength(14);
    expectError(
      await method(t, 'GET', 'frappe.desk.search.search_link', { query: { doctype: 'Genre', txt: 'g', page_length: 'ten' } }),
      417,
      'FrappeTypeError',
    );
  });

  it('applies filters (JSON object or list) and refuses hostile ones with 417', async () => {
    const t = await library();
    await genre(t, 'Drama');
    await genre(t, 'Poetry');
    const hamlet = await book(t, { title: 'Hamlet', genre: 'Drama' });
    await book(t, { title: 'Hamlet (verse)', genre: 'Poetry' });
    expect((await search(t, { doctype: 'Book', txt: 'hamlet', filters: JSON.stringify({ genre: 'Drama' }) })).map((r) => r.value)).toEqual([hamlet.name]);
    expect((await search(t, { doctype: 'Book', txt: 'hamlet', filters: JSON.stringify([['genre', '=', 'Drama']]) })).map((r) => r.value)).toEqual([
      hamlet.name,
    ]);
    expect((await search(t, { doctype: 'Book', txt: 'hamlet', filters: JSON.stringify({ genre: ['!=', 'Drama'] }) })).map((r) => r.label)).toEqual([
      'Hamlet (verse)',
    ]);
    const viaJson = await method(t, 'POST', 'frappe.desk.search.search_link', { json: { doctype: 'Book', txt: 'hamlet', filters: { genre: 'Drama' } } });
    expect(viaJson.body.message.map((r: any) => r.value)).toEqual([hamlet.name]);
    for (const filters of ['{"genre; drop table x": 1}', '[["genre", "= 1 or 1=1 --", "x"]]', '{"(select 1)": 1}', 'not json']) {
      const res = await method(t, 'GET', 'frappe.desk.search.search_link', { query: { doctype: 'Book', txt: 'h', filters } });
      expect(res.status, `${filters}: ${res.text}`).toBe(417);
    }
  });

  it('leaves out disabled records (an `enabled` Check must be 1, a `disabled` Check must not be)', async () => {
    const t = await library();
    await createDoctype(t, { name: 'Member', autoname: 'prompt', fields: [{ fieldname: 'enabled', fieldtype: 'Check', default: '1' }] });
    await createDoctype(t, { name: 'Branch', autoname: 'prompt', fields: [{ fieldname: 'disabled', fieldtype: 'Check' }] });
    await insert(t, 'Member', { name: 'ann' });
    await insert(t, 'Member', { name: 'anna', enabled: 0 });
    await insert(t, 'Branch', { name: 'north' });
    await insert(t, 'Branch', { name: 'northeast', disabled: 1 });
    expect((await search(t, { doctype: 'Member', txt: 'ann' })).map((r) => r.value)).toEqual(['ann']);
    expect((await search(t, { doctype: 'Branch', txt: 'north' })).map((r) => r.value)).toEqual(['north']);
  });

  it('offers only rows the caller may read; no read permission is a 403', async () => {
    const t = await library();
    await createRole(t, 'Member');
    await createRole(t, 'Clerk');
    await createDoctype(t, {
      name: 'Wish',
      fields: [{ fieldname: 'title', fieldtype: 'Data' }],
      title_field: 'title',
      permissions: [
        { role: 'System Manager', read: 1, write: 1, create: 1 },
        { role: 'Member', read: 1, write: 1, create: 1, if_owner: 1 },
      ],
    });
    const ann = await createUser(server, t, 'ann@example.com', ['Member']);
    const bob = await createUser(server, t, 'bob@example.com', ['Member']);
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    await t.call('POST', '/api/resource/Wish', { auth: ann.auth, json: { title: 'wish of ann' } });
    await t.call('POST', '/api/resource/Wish', { auth: bob.auth, json: { title: 'wish of bob' } });
    expect((await search(t, { doctype: 'Wish', txt: 'wish' }, ann.auth)).map((r) => r.label)).toEqual(['wish of ann']);
    expect((await search(t, { doctype: 'Wish', txt: 'wish' })).map((r) => r.label).sort()).toEqual(['wish of ann', 'wish of bob']);
    expectError(await method(t, 'GET', 'frappe.desk.search.search_link', { auth: clerk.auth, query: { doctype: 'Wish', txt: 'w' } }), 403, 'PermissionError');
    expectError(await method(t, 'GET', 'frappe.desk.search.search_link', { auth: null, query: { doctype: 'Wish', txt: 'w' } }), 403, 'PermissionError');
  });

  it('refuses a searchfield that is not a field with 417 DataError (test_search_field_sanitizer)', async () => {
    const t = await library();
    await genre(t, 'Poetry', 'lyrical');
    const ok = await search(t, { doctype: 'DocType', txt: 'User', searchfield: 'name', page_length: 20 });
    expect(ok.map((r) => r.value)).toContain('User');
    const hostile = ['1=1', 'select * from tabSessions) --', 'name or (select * from tabSessions)', '*', ';', 'select`sid`from`tabSessions`', 'no_such_field'];
    for (const searchfield of hostile) {
      const res = await method(t, 'GET', 'frappe.desk.search.search_link', { query: { doctype: 'DocType', txt: 'Customer', page_length: 20, searchfield } });
      expectError(res, 417, 'DataError');
      expect(serverMessages(res.body)).toEqual([`Invalid Search Field ${searchfield}`]);
    }
    // a real field is added to the description
    expect(await search(t, { doctype: 'Genre', txt: 'poe', searchfield: 'description' })).toEqual([{ value: 'Poetry', description: 'lyrical' }]);
  });

  it("searches DocTypes (the desk's own Link fields) and serves the Python client's GET /?cmd=…", async () => {
    const t = await library();
    const res = await legacyGet(t, 'frappe.desk.search.search_link', { doctype: 'DocType', txt: 'Use' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message[0]).toEqual({ value: 'User', description: 'Core' });
    const post = await method(t, 'POST', 'frappe.desk.search.search_link', { json: { doctype: 'DocType', txt: 'Genre', page_length: 5 } });
    expect(post.body.message).toEqual([{ value: 'Genre', description: 'Custom' }]);
    expectError(await method(t, 'PATCH', 'frappe.desk.search.search_link', { json: { doctype: 'DocType', txt: 'x' } }), 403, 'PermissionError');
  });

  it('refuses custom queries, Singles and unknown DocTypes', async () => {
    const t = await library();
    expectError(
      await method(t, 'GET', 'frappe.desk.search.search_link', { query: { doctype: 'Genre', txt: 'x', query: 'erpnext.controllers.queries.item_query' } }),
      417,
      'ValidationError',
    );
    expectError(await method(t, 'GET', 'frappe.desk.search.search_link', { query: { doctype: 'Library Settings', txt: 'x' } }), 417, 'ValidationError');
    expectError(await method(t, 'GET', 'frappe.desk.search.search_link', { query: { doctype: 'Nope', txt: 'x' } }), 404, 'DoesNotExistError');
  });
});
