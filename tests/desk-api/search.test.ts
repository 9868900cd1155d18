import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRole, createUser } from '../platform/helpers';
import { expectError, fetchDoc, insert } from '../record-api/helpers';
import { ALL_RIGHTS, postDoctype } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { book, genre, libraryTenant, method } from '../methods/helpers';

/**
 * The desk's search box API: frappe.utils.global_search.search (documents across the DocTypes the
 * caller may read: the __global_search index for DocTypes with `in_global_search` fields, name,
 * title and search fields for the others) and frappe.desk.search.search_widget.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const library = () => libraryTenant(() => server.tenant('gs'));

async function search(t: TestTenant, args: Record<string, string | number>, auth?: string): Promise<any[]> {
  const res = await method(t, 'GET', 'frappe.utils.global_search.search', { query: args, ...(auth ? { auth } : {}) });
  if (res.status !== 200) throw new Error(`search failed: ${res.status} ${res.text}`);
  return res.body.message;
}

const keys = (rows: any[]) => rows.map((r) => `${r.doctype}/${r.name}`);

async function doctype(t: TestTenant, def: Record<string, unknown>): Promise<void> {
  const res = await postDoctype(t, { module: 'Custom', permissions: [ALL_RIGHTS], ...def });
  if (res.status !== 200) throw new Error(`creating DocType failed: ${res.status} ${res.text}`);
}

/** Memo: opted in (subject, body, its lines' notes), with a permlevel-1 code word Members cannot read. */
async function memoDoctypes(t: TestTenant): Promise<void> {
  await createRole(t, 'Member');
  await doctype(t, { name: 'Memo Line', istable: 1, permissions: [], fields: [{ fieldname: 'note', label: 'Note', fieldtype: 'Data', in_global_search: 1 }] });
  await doctype(t, {
    name: 'Memo',
    title_field: 'subject',
    fields: [
      { fieldname: 'subject', label: 'Subject', fieldtype: 'Data', in_global_search: 1 },
      { fieldname: 'body', label: 'Body', fieldtype: 'Text Editor', in_global_search: 1 },
      { fieldname: 'code_word', label: 'Code Word', fieldtype: 'Data', in_global_search: 1, permlevel: 1 },
      { fieldname: 'lines', label: 'Lines', fieldtype: 'Table', options: 'Memo Line' },
    ],
    permissions: [ALL_RIGHTS, { role: 'System Manager', permlevel: 1, read: 1, write: 1 }, { role: 'Member', read: 1, write: 0, create: 0, delete: 0 }],
  });
}

describe('frappe.utils.global_search.search', () => {
  it('finds documents by name, title and search fields in DocTypes that do not opt in', async () => {
    const t = await library();
    await genre(t, 'Sci-Fi');
    const dune = await book(t, { title: 'Dune', author: 'Frank Herbert', genre: 'Sci-Fi', format: 'Hardcover' });
    const byTitle = await search(t, { text: 'dune' });
    expect(byTitle).toContainEqual({ doctype: 'Book', name: dune.name, title: 'Dune', content: 'Title : Dune ||| Author : Frank Herbert ||| Genre : Sci-Fi' });
    expect(keys(await search(t, { text: 'herbert' }))).toEqual([`Book/${dune.name}`]);
    expect(keys(await search(t, { text: dune.name }))).toEqual([`Book/${dune.name}`]);
    const scifi = keys(await search(t, { text: 'sci-fi' }));
    expect(scifi).toContain('Genre/Sci-Fi');
    expect(scifi).toContain(`Book/${dune.name}`);
    // a field that is neither the name, the title nor a search field is not searched
    expect(await search(t, { text: 'Hardcover' })).toEqual([]);
    // `doctype` narrows the search; a DocType the caller cannot read (or that does not exist) finds nothing
    expect(keys(await search(t, { text: 'sci-fi', doctype: 'Genre' }))).toEqual(['Genre/Sci-Fi']);
    expect(await search(t, { text: 'sci-fi', doctype: 'Nope' })).toEqual([]);
    // `&` separates phrases searched on their own
    expect(keys(await search(t, { text: 'herbert & zzz-nothing' }))).toEqual([`Book/${dune.name}`]);
    expect(await search(t, { text: '  ' })).toEqual([]);
  });

  it('finds opted-in documents by their content (prefixes, child rows, markup stripped), kept up to date on save, rename and delete', async () => {
    const t = await server.tenant('gs');
    await memoDoctypes(t);
    const memo = await insert(t, 'Memo', {
      subject: 'Launch plan',
      body: '<p>The <b>quarterly</b> numbers</p>',
      code_word: 'zebra',
      lines: [{ note: 'Book the venue' }],
    });
    const [hit] = await search(t, { text: 'quart' });
    expect(hit).toEqual({
      doctype: 'Memo',
      name: memo.name,
      title: 'Launch plan',
      content: 'Subject : Launch plan ||| Body : The quarterly numbers ||| Code Word : zebra ||| Note : Book the venue',
    });
    expect(keys(await search(t, { text: 'venue' }))).toEqual([`Memo/${memo.name}`]);
    expect(keys(await search(t, { text: 'launch numbers' }))).toEqual([`Memo/${memo.name}`]);
    expect(await search(t, { text: 'launch weekly' })).toEqual([]);

    const res = await t.call('PUT', `/api/resource/Memo/${memo.name}`, { json: { body: 'Weekly figures' } });
    expect(res.status, res.text).toBe(200);
    expect(await search(t, { text: 'quarterly' })).toEqual([]);
    expect(keys(await search(t, { text: 'weekly' }))).toEqual([`Memo/${memo.name}`]);

    const renamed = await method(t, 'POST', 'frappe.client.rename_doc', { json: { doctype: 'Memo', old_name: memo.name, new_name: 'memo-renamed' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(keys(await search(t, { text: 'weekly' }))).toEqual(['Memo/memo-renamed']);

    expect((await t.call('DELETE', '/api/resource/Memo/memo-renamed')).status).toBe(202);
    expect(await search(t, { text: 'weekly' })).toEqual([]);
  });

  it('never finds a document the caller may not read (if_owner), in the index or not', async () => {
    const t = await server.tenant('gs');
    await createRole(t, 'Member');
    await doctype(t, {
      name: 'Diary',
      fields: [{ fieldname: 'entry', label: 'Entry', fieldtype: 'Data', in_global_search: 1 }],
      permissions: [ALL_RIGHTS, { role: 'Member', read: 1, write: 1, create: 1, if_owner: 1 }],
    });
    const ann = await createUser(server, t, 'ann@example.com', ['Member']);
    const bob = await createUser(server, t, 'bob@example.com', ['Member']);
    const todo = await t.call('POST', '/api/resource/ToDo', { auth: ann.auth, json: { description: 'Renew the orchid licence' } });
    expect(todo.status, todo.text).toBe(200);
    const diary = await t.call('POST', '/api/resource/Diary', { auth: ann.auth, json: { entry: 'Orchid show on Sunday' } });
    expect(diary.status, diary.text).toBe(200);
    const both = [`ToDo/${todo.body.data.name}`, `Diary/${diary.body.data.name}`].sort();

    expect(keys(await search(t, { text: 'orchid' }, ann.auth)).sort()).toEqual(both);
    expect(await search(t, { text: 'orchid' }, bob.auth)).toEqual([]);
    expect(await search(t, { text: String(todo.body.data.name) }, bob.auth)).toEqual([]);
    expect(keys(await search(t, { text: 'orchid' })).sort()).toEqual(both);
    // Guest may not call it at all
    expectError(await method(t, 'GET', 'frappe.utils.global_search.search', { auth: null, query: { text: 'orchid' } }), 403, 'PermissionError');
  });

  it('neither matches nor shows a field at a permlevel the caller cannot read', async () => {
    const t = await server.tenant('gs');
    await memoDoctypes(t);
    await doctype(t, {
      name: 'Agent',
      autoname: 'field:alias',
      title_field: 'alias',
      search_fields: 'real_name',
      fields: [
        { fieldname: 'alias', label: 'Alias', fieldtype: 'Data' },
        { fieldname: 'real_name', label: 'Real Name', fieldtype: 'Data', permlevel: 1 },
      ],
      permissions: [ALL_RIGHTS, { role: 'System Manager', permlevel: 1, read: 1, write: 1 }, { role: 'Member', read: 1, write: 0, create: 0, delete: 0 }],
    });
    const memo = await insert(t, 'Memo', { subject: 'Launch plan', code_word: 'zebra' });
    await insert(t, 'Agent', { alias: 'Nightjar', real_name: 'Bond' });
    const member = await createUser(server, t, 'member@example.com', ['Member']);

    expect(await search(t, { text: 'zebra' }, member.auth)).toEqual([]);
    expect(await search(t, { text: 'bond' }, member.auth)).toEqual([]);
    expect(await search(t, { text: 'launch' }, member.auth)).toEqual([
      { doctype: 'Memo', name: memo.name, title: 'Launch plan', content: 'Subject : Launch plan' },
    ]);
    expect(await search(t, { text: 'nightjar' }, member.auth)).toEqual([
      { doctype: 'Agent', name: 'Nightjar', title: 'Nightjar', content: 'Alias : Nightjar' },
    ]);
    // who may read level 1 finds and sees it
    expect((await search(t, { text: 'zebra' }))[0]?.content).toBe('Subject : Launch plan ||| Code Word : zebra');
    expect((await search(t, { text: 'bond' }))[0]?.content).toBe('Alias : Nightjar ||| Real Name : Bond');
  });

  it('indexes the existing documents of a DocType when one of its fields opts in', async () => {
    const t = await server.tenant('gs');
    await doctype(t, { name: 'Recipe', fields: [{ fieldname: 'dish', label: 'Dish', fieldtype: 'Data' }] });
    const recipe = await insert(t, 'Recipe', { dish: 'Lasagna' });
    expect(await search(t, { text: 'lasagna' })).toEqual([]);
    const def = await fetchDoc(t, 'DocType', 'Recipe');
    const fields = def.fields.map((f: any) => (f.fieldname === 'dish' ? { ...f, in_global_search: 1 } : f));
    const res = await t.call('PUT', '/api/resource/DocType/Recipe', { json: { fields } });
    expect(res.status, res.text).toBe(200);
    expect(await search(t, { text: 'lasagna' })).toEqual([{ doctype: 'Recipe', name: recipe.name, title: recipe.name, content: 'Dish : Lasagna' }]);
  });

  it('pages with start and limit; bad arguments are a 417', async () => {
    const t = await library();
    for (const g of ['Poetry A', 'Poetry B', 'Poetry C']) await genre(t, g);
    const all = keys(await search(t, { text: 'poetry' }));
    expect(all).toHaveLength(3);
    expect(keys(await search(t, { text: 'poetry', limit: 2 }))).toEqual(all.slice(0, 2));
    expect(keys(await search(t, { text: 'poetry', start: 2, limit: 2 }))).toEqual(all.slice(2));
    const bad: Array<Record<string, unknown>> = [{}, { text: 'x', limit: 'ten' }, { text: 'x', start: -1 }, { text: { a: 1 } }];
    for (const json of bad) {
      const res = await method(t, 'POST', 'frappe.utils.global_search.search', { json });
      expect(res.status, `${JSON.stringify(json)}: ${res.text}`).toBe(417);
    }
  });
});

describe('frappe.desk.search.search_widget', () => {
  it('answers rows of name, title, searchfield and search fields (lists, or dicts with as_dict), paged with start', async () => {
    const t = await library();
    await genre(t, 'Sci-Fi');
    const dune = await book(t, { title: 'Dune', author: 'Herbert', genre: 'Sci-Fi', pages: 412 });
    const messiah = await book(t, { title: 'Dune Messiah', author: 'Herbert', genre: 'Sci-Fi', pages: 256 });
    const call = async (query: Record<string, string | number>) => {
      const res = await method(t, 'GET', 'frappe.desk.search.search_widget', { query: { doctype: 'Book', ...query } });
      expect(res.status, res.text).toBe(200);
      return res.body.message;
    };
    const rows = await call({ txt: 'dune' });
    expect(rows).toHaveLength(2);
    expect(rows).toContainEqual([dune.name, 'Dune', 'Herbert', 'Sci-Fi']);
    expect(rows).toContainEqual([messiah.name, 'Dune Messiah', 'Herbert', 'Sci-Fi']);
    expect(await call({ txt: 'messiah', as_dict: 1 })).toEqual([{ name: messiah.name, title: 'Dune Messiah', author: 'Herbert', genre: 'Sci-Fi' }]);
    expect(await call({ txt: 'messiah', searchfield: 'pages', filter_fields: '["format"]', as_dict: 1 })).toEqual([
      { name: messiah.name, title: 'Dune Messiah', pages: 256, author: 'Herbert', genre: 'Sci-Fi', format: 'Paperback' },
    ]);
    const first = await call({ txt: 'dune', page_length: 1 });
    const second = await call({ txt: 'dune', page_length: 1, start: 1 });
    expect([first[0][0], second[0][0]].sort()).toEqual([dune.name, messiah.name].sort());
  });

  it('refuses bad arguments with 417, never a 5xx', async () => {
    const t = await library();
    const cases: Array<[Record<string, string | number>, string]> = [
      [{ txt: 'x' }, 'ValidationError'],
      [{ doctype: 'Book', txt: 'x', start: 'one' }, 'FrappeTypeError'],
      [{ doctype: 'Book', txt: 'x', page_length: -2 }, 'FrappeTypeError'],
      [{ doctype: 'Book', txt: 'x', filter_fields: '["nope"]' }, 'DataError'],
      [{ doctype: 'Book', txt: 'x', filter_fields: '{"a": 1}' }, 'ValidationError'],
      [{ doctype: 'Book', txt: 'x', searchfield: 'title; drop table x' }, 'DataError'],
    ];
    for (const [query, exc] of cases) expectError(await method(t, 'GET', 'frappe.desk.search.search_widget', { query }), 417, exc);
    expectError(await method(t, 'GET', 'frappe.desk.search.search_widget', { query: { doctype: 'Nope', txt: 'x' } }), 404, 'DoesNotExistError');
  });
});
