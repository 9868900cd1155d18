import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer, type TestTenant } from '../support/server';
import {
  columnsOf,
  createDocType,
  createRole,
  createUser,
  expectError,
  expectOk,
  pollUntil,
  schemasWithTable,
  startChildServer,
  type ChildServer,
} from './helpers';

/** DocTypes are data: created, altered and dropped at runtime through /api/resource/DocType. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const NOTE = {
  name: 'Note',
  fields: [
    { fieldname: 'title', fieldtype: 'Data' },
    { fieldname: 'body', fieldtype: 'Small Text' },
  ],
};

async function fieldsOfDocType(t: TestTenant, doctype: string): Promise<Array<{ fieldname: string; fieldtype: string; length?: number }>> {
  const res = await t.call('GET', `/api/resource/DocType/${doctype}`);
  expectOk(res);
  return (res.body.data.fields as Array<{ fieldname: string; fieldtype: string; length?: number }>).map((f) => ({
    fieldname: f.fieldname,
    fieldtype: f.fieldtype,
    ...(f.length ? { length: f.length } : {}),
  }));
}

async function titlesOf(t: TestTenant, doctype: string, fields: string[]): Promise<unknown[]> {
  const res = await t.call('GET', `/api/resource/${doctype}`, { query: { fields: JSON.stringify(fields), order_by: 'name asc', limit: 0 } });
  expectOk(res);
  return res.body.data;
}

describe('creating a DocType', () => {
  it('serves the record API for a new DocType at once', async () => {
    const t = await server.tenant();
    const dt = await createDocType(t, NOTE);
    expect(dt).toMatchObject({ name: 'Note', doctype: 'DocType', custom: 1, module: 'Custom' });
    const created = await t.call('POST', '/api/resource/Note', { json: { title: 'first', body: 'hello' } });
    expectOk(created);
    expect(created.body.data).toMatchObject({ doctype: 'Note', title: 'first', body: 'hello', owner: 'Administrator', docstatus: 0 });
    const list = await t.call('GET', '/api/resource/Note', { query: { fields: '["name","title","body"]' } });
    expectOk(list);
    expect(list.body.data).toEqual([{ name: created.body.data.name, title: 'first', body: 'hello' }]);
    const got = await t.call('GET', `/api/resource/Note/${created.body.data.name}`);
    expectOk(got);
    expect(got.body.data.title).toBe('first');
  });

  it("creates the DocType's table in the tenant's own schema only", async () => {
    const a = await server.tenant();
    const b = await server.tenant();
    await createDocType(a, { ...NOTE, name: 'Schema Probe' });
    expect(await schemasWithTable(server, 'tabSchema Probe')).toEqual([a.schema]);
    const cols = await columnsOf(server, a.schema, 'tabSchema Probe');
    expect(cols.title).toEqual({ data_type: 'character varying', max_length: 140 });
    expect(cols.body).toEqual({ data_type: 'text', max_length: null });
    expect(Object.keys(cols)).toEqual(expect.arrayContaining(['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus', 'idx']));
    // the other tenant knows nothing of it
    expectError(await b.call('GET', '/api/resource/Schema Probe'), 404, 'DoesNotExistError');
    expectError(await b.call('GET', '/api/resource/DocType/Schema Probe'), 404, 'DoesNotExistError');
  });
});

describe('changing a DocType with PUT', () => {
  it('adds a field as a new column, keeping existing records', async () => {
    const t = await server.tenant();
    await createDocType(t, NOTE);
    const r1 = await t.call('POST', '/api/resource/Note', { json: { title: 'a', body: 'x' } });
    expectOk(r1);
    const put = await t.call('PUT', '/api/resource/DocType/Note', {
      json: { fields: [...NOTE.fields, { fieldname: 'rating', fieldtype: 'Int' }] },
    });
    expectOk(put);
    expect((await columnsOf(server, t.schema, 'tabNote')).rating).toEqual({ data_type: 'bigint', max_length: null });
    const r2 = await t.call('POST', '/api/resource/Note', { json: { title: 'b', rating: 5 } });
    expectOk(r2);
    const rows = await t.call('GET', '/api/resource/Note', { query: { fields: '["title","body","rating"]', order_by: 'title asc' } });
    expect(rows.body.data).toEqual([
      { title: 'a', body: 'x', rating: 0 },
      { title: 'b', body: null, rating: 5 },
    ]);
  });

  it('widens a Data field from 140 to 200 characters, keeping its values', async () => {
    const t = await server.tenant();
    await createDocType(t, NOTE);
    expectOk(await t.call('POST', '/api/resource/Note', { json: { title: 'kept', body: 'b' } }));
    const long = 'x'.repeat(180);
    expectError(await t.call('POST', '/api/resource/Note', { json: { title: long } }), 417, 'CharacterLengthExceededError');
    const put = await t.call('PUT', '/api/resource/DocType/Note', {
      json: { fields: [{ fieldname: 'title', fieldtype: 'Data', length: 200 }, NOTE.fields[1]] },
    });
    expectOk(put);
    expect((await columnsOf(server, t.schema, 'tabNote')).title).toEqual({ data_type: 'character varying', max_length: 200 });
    expectOk(await t.call('POST', '/api/resource/Note', { json: { title: long } }));
    expect(await titlesOf(t, 'Note', ['title', 'body'])).toEqual(
      expect.arrayContaining([
        { title: 'kept', body: 'b' },
        { title: long, body: null },
      ]),
    );
  });

  it('changes a Data field holding numeric strings to Int, converting the values', async () => {
    const t = await server.tenant();
    await createDocType(t, {
      name: 'Counter',
      fields: [
        { fieldname: 'label', fieldtype: 'Data' },
        { fieldname: 'qty', fieldtype: 'Data' },
      ],
    });
    expectOk(await t.call('POST', '/api/resource/Counter', { json: { label: 'one', qty: '12' } }));
    expectOk(await t.call('POST', '/api/resource/Counter', { json: { label: 'two', qty: ' 7 ' } }));
    const put = await t.call('PUT', '/api/resource/DocType/Counter', {
      json: {
        fields: [
          { fieldname: 'label', fieldtype: 'Data' },
          { fieldname: 'qty', fieldtype: 'Int' },
        ],
      },
    });
    expectOk(put);
    expect((await columnsOf(server, t.schema, 'tabCounter')).qty?.data_type).toBe('bigint');
    const rows = await t.call('GET', '/api/resource/Counter', { query: { fields: '["label","qty"]', order_by: 'label asc' } });
    expect(rows.body.data).toEqual([
      { label: 'one', qty: 12 },
      { label: 'two', qty: 7 },
    ]);
  });

  it('removes a field by dropping its column, keeping the other fields', async () => {
    const t = await server.tenant();
    await createDocType(t, NOTE);
    const created = await t.call('POST', '/api/resource/Note', { json: { title: 'stays', body: 'goes' } });
    expectOk(created);
    const put = await t.call('PUT', '/api/resource/DocType/Note', { json: { fields: [NOTE.fields[0]] } });
    expectOk(put);
    expect(await columnsOf(server, t.schema, 'tabNote')).not.toHaveProperty('body');
    expect((await fieldsOfDocType(t, 'Note')).map((f) => f.fieldname)).toEqual(['title']);
    const got = await t.call('GET', `/api/resource/Note/${created.body.data.name}`);
    expectOk(got);
    expect(got.body.data.title).toBe('stays');
    expect(got.body.data).not.toHaveProperty('body');
    expectError(await t.call('GET', '/api/resource/Note', { query: { fields: '["body"]' } }), 417, 'DataError');
  });

  it('refuses a type change the data cannot take with 417, changing nothing', async () => {
    const t = await server.tenant();
    await createDocType(t, {
      name: 'Counter',
      fields: [
        { fieldname: 'label', fieldtype: 'Data' },
        { fieldname: 'qty', fieldtype: 'Data' },
      ],
    });
    expectOk(await t.call('POST', '/api/resource/Counter', { json: { label: 'num', qty: '3' } }));
    expectOk(await t.call('POST', '/api/resource/Counter', { json: { label: 'word', qty: 'abc' } }));
    const before = await t.call('GET', '/api/resource/DocType/Counter');
    const columnsBefore = await columnsOf(server, t.schema, 'tabCounter');
    const put = await t.call('PUT', '/api/resource/DocType/Counter', {
      json: {
        fields: [
          { fieldname: 'label', fieldtype: 'Data' },
          { fieldname: 'qty', fieldtype: 'Int' },
          { fieldname: 'extra', fieldtype: 'Data' },
        ],
      },
    });
    expectError(put, 417, 'ValidationError');
    expect(await columnsOf(server, t.schema, 'tabCounter')).toEqual(columnsBefore);
    const after = await t.call('GET', '/api/resource/DocType/Counter');
    expect(after.body.data).toEqual(before.body.data);
    expect(await fieldsOfDocType(t, 'Counter')).toEqual([
      { fieldname: 'label', fieldtype: 'Data' },
      { fieldname: 'qty', fieldtype: 'Data' },
    ]);
    const rows = await t.call('GET', '/api/resource/Counter', { query: { fields: '["label","qty"]', order_by: 'label asc' } });
    expect(rows.body.data).toEqual([
      { label: 'num', qty: '3' },
      { label: 'word', qty: 'abc' },
    ]);
  });
});

describe('invalid DocType definitions', () => {
  const invalid: Array<[string, Record<string, unknown>]> = [
    ['a bad fieldname', { name: 'Bad', fields: [{ fieldname: 'Bad Name', fieldtype: 'Data' }] }],
    ['a fieldname with SQL in it', { name: 'Bad', fields: [{ fieldname: 'x"; drop table "tabToDo', fieldtype: 'Data' }] }],
    [
      'a duplicate fieldname',
      {
        name: 'Bad',
        fields: [
          { fieldname: 'title', fieldtype: 'Data' },
          { fieldname: 'title', fieldtype: 'Int' },
        ],
      },
    ],
    ['the reserved fieldname name', { name: 'Bad', fields: [{ fieldname: 'name', fieldtype: 'Data' }] }],
    ['the reserved fieldname owner', { name: 'Bad', fields: [{ fieldname: 'owner', fieldtype: 'Data' }] }],
    ['the reserved fieldname docstatus', { name: 'Bad', fields: [{ fieldname: 'docstatus', fieldtype: 'Int' }] }],
    ['a Link to a missing DocType', { name: 'Bad', fields: [{ fieldname: 'customer', fieldtype: 'Link', options: 'Customer' }] }],
    ['a Table field whose options is not a child table', { name: 'Bad', fields: [{ fieldname: 'todos', fieldtype: 'Table', options: 'ToDo' }] }],
    ['a Table field whose options is missing', { name: 'Bad', fields: [{ fieldname: 'rows', fieldtype: 'Table', options: 'Nothing Here' }] }],
    ['an unknown fieldtype', { name: 'Bad', fields: [{ fieldname: 'title', fieldtype: 'Sparkles' }] }],
    ['a bad autoname', { name: 'Bad', autoname: 'whatever', fields: [{ fieldname: 'title', fieldtype: 'Data' }] }],
    ['an autoname field: naming a missing field', { name: 'Bad', autoname: 'field:nope', fields: [{ fieldname: 'title', fieldtype: 'Data' }] }],
    ['a bad DocType name', { name: 'Bad"; drop schema x; --', fields: [{ fieldname: 'title', fieldtype: 'Data' }] }],
  ];

  it.each(invalid)('refuses %s with 417 and creates nothing', async (_what, definition) => {
    const t = await server.tenant();
    const tables = async () =>
      (await server.db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [t.schema])).rows;
    const before = await tables();
    const res = await t.call('POST', '/api/resource/DocType', { json: definition });
    expectError(res, 417, 'ValidationError');
    const list = await t.call('GET', '/api/resource/DocType', { query: { filters: JSON.stringify([['custom', '=', 1]]) } });
    expectOk(list);
    expect(list.body.data).toEqual([]);
    expect(await tables()).toEqual(before);
  });

  it('refuses a PUT introducing an invalid field with 417, keeping the DocType as it was', async () => {
    const t = await server.tenant();
    await createDocType(t, NOTE);
    const res = await t.call('PUT', '/api/resource/DocType/Note', {
      json: { fields: [...NOTE.fields, { fieldname: 'owner', fieldtype: 'Data' }] },
    });
    expectError(res, 417, 'ValidationError');
    expect((await fieldsOfDocType(t, 'Note')).map((f) => f.fieldname)).toEqual(['title', 'body']);
  });
});

describe('standard DocTypes', () => {
  it.each(['ToDo', 'User', 'DocType'])('refuses to change standard DocType %s (417)', async (doctype) => {
    const t = await server.tenant();
    const before = await t.call('GET', `/api/resource/DocType/${doctype}`);
    expectOk(before);
    const fields = before.body.data.fields as Array<Record<string, unknown>>;
    const res = await t.call('PUT', `/api/resource/DocType/${doctype}`, {
      json: {
        fields: [...fields.map((f) => ({ fieldname: f.fieldname, fieldtype: f.fieldtype, options: f.options })), { fieldname: 'hacked', fieldtype: 'Data' }],
      },
    });
    expectError(res, 417, 'ValidationError');
    const after = await t.call('GET', `/api/resource/DocType/${doctype}`);
    expect(after.body.data).toEqual(before.body.data);
    expect(await columnsOf(server, t.schema, `tab${doctype}`)).not.toHaveProperty('hacked');
  });

  it.each(['ToDo', 'User', 'DocType'])('refuses to delete standard DocType %s (417)', async (doctype) => {
    const t = await server.tenant();
    const res = await t.call('DELETE', `/api/resource/DocType/${doctype}`);
    expectError(res, 417, 'ValidationError');
    expectOk(await t.call('GET', `/api/resource/DocType/${doctype}`));
    expect(await schemasWithTable(server, `tab${doctype}`)).toContain(t.schema);
    expectOk(await t.call('GET', `/api/resource/${doctype}`));
  });

  it('refuses a non-System-Manager user who tries to create a DocType (403)', async () => {
    const t = await server.tenant();
    await createRole(t, 'Blogger');
    const user = await createUser(server, t, 'blogger@example.com', ['Blogger']);
    const res = await t.call('POST', '/api/resource/DocType', { json: NOTE, auth: user.auth });
    expectError(res, 403, 'PermissionError');
    expect(await schemasWithTable(server, 'tabNote')).not.toContain(t.schema);
    expectError(await t.call('GET', '/api/resource/Note'), 404, 'DoesNotExistError');
  });
});

describe('deleting a DocType', () => {
  it('drops its table and its record API answers 404', async () => {
    const t = await server.tenant();
    await createDocType(t, NOTE);
    const rec = await t.call('POST', '/api/resource/Note', { json: { title: 'doomed' } });
    expectOk(rec);
    const del = await t.call('DELETE', '/api/resource/DocType/Note');
    expect(del.status).toBe(202);
    expect(del.body).toEqual({ data: 'ok' });
    expect(await schemasWithTable(server, 'tabNote')).not.toContain(t.schema);
    expectError(await t.call('GET', '/api/resource/Note'), 404, 'DoesNotExistError');
    expectError(await t.call('GET', `/api/resource/Note/${rec.body.data.name}`), 404, 'DoesNotExistError');
    expectError(await t.call('POST', '/api/resource/Note', { json: { title: 'again' } }), 404, 'DoesNotExistError');
    expectError(await t.call('GET', '/api/resource/DocType/Note'), 404, 'DoesNotExistError');
    // its fields are gone with it
    const fields = await server.db.query(`SELECT 1 FROM "${t.schema}"."tabDocField" WHERE "parent" = 'Note'`);
    expect(fields.rows).toEqual([]);
  });
});

describe('another API process', () => {
  let child: ChildServer;
  beforeAll(async () => {
    child = await startChildServer();
  }, 60_000);
  afterAll(async () => {
    await child.stop();
  });

  async function warm(t: TestTenant): Promise<void> {
    // the child learns of the new tenant through a notification; then its caches are warm
    const ms = await pollUntil(async () => (await call(child.url, t.name, 'GET', '/api/resource/ToDo', { auth: t.auth })).status === 200, 5_000);
    expect(ms).toBeLessThan(5_000);
    expectOk(await call(child.url, t.name, 'GET', '/api/resource/ToDo', { auth: t.auth }));
  }

  it('sees a DocType created in this process within one second', async () => {
    const t = await server.tenant();
    await warm(t);
    expectError(await call(child.url, t.name, 'GET', '/api/resource/Note', { auth: t.auth }), 404, 'DoesNotExistError');
    await createDocType(t, NOTE);
    const ms = await pollUntil(async () => (await call(child.url, t.name, 'GET', '/api/resource/Note', { auth: t.auth })).status === 200, 3_000, 5);
    expect(ms).toBeLessThan(1000);
    const created = await call(child.url, t.name, 'POST', '/api/resource/Note', { auth: t.auth, json: { title: 'from the child' } });
    expectOk(created);
    expect(created.body.data.title).toBe('from the child');
  });

  it('sees a field added by PUT in this process within one second', async () => {
    const t = await server.tenant();
    await createDocType(t, NOTE);
    await warm(t);
    const probe = () => call(child.url, t.name, 'GET', '/api/resource/Note', { auth: t.auth, query: { fields: '["rating"]' } });
    expectOk(await call(child.url, t.name, 'GET', '/api/resource/Note', { auth: t.auth }));
    expectError(await probe(), 417, 'DataError');
    expectOk(await t.call('PUT', '/api/resource/DocType/Note', { json: { fields: [...NOTE.fields, { fieldname: 'rating', fieldtype: 'Int' }] } }));
    const ms = await pollUntil(async () => (await probe()).status === 200, 3_000, 5);
    expect(ms).toBeLessThan(1000);
    const created = await call(child.url, t.name, 'POST', '/api/resource/Note', { auth: t.auth, json: { title: 'r', rating: 4 } });
    expectOk(created);
    expect(created.body.data.rating).toBe(4);
  });
});
