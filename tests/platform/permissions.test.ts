import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { createDocType, createRole, createUser, expectError, expectOk, type TestUser } from './helpers';

/** Roles and DocPerm rows (frappe/permissions.py), enforced on every operation and inside lists. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Note: System Manager has everything; Blogger only on their own notes; `secret` is permlevel 1. */
const NOTE = {
  name: 'Note',
  fields: [
    { fieldname: 'title', fieldtype: 'Data' },
    { fieldname: 'secret', fieldtype: 'Data', permlevel: 1 },
  ],
  permissions: [
    { role: 'System Manager', ...FULL },
    { role: 'Blogger', ...FULL, if_owner: 1 },
    { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
  ],
};

async function count(t: TestTenant, doctype: string, auth?: string, filters?: unknown) {
  return t.call('GET', '/api/method/frappe.client.get_count', {
    query: { doctype, ...(filters ? { filters: JSON.stringify(filters) } : {}) },
    ...(auth ? { auth } : {}),
  });
}

async function insert(t: TestTenant, doctype: string, doc: Record<string, unknown>, auth?: string): Promise<string> {
  const res = await t.call('POST', `/api/resource/${doctype}`, { json: doc, ...(auth ? { auth } : {}) });
  expectOk(res);
  return String(res.body.data.name);
}

async function titles(t: TestTenant, doctype: string, auth: string, extra: Record<string, string> = {}) {
  const res = await t.call('GET', `/api/resource/${doctype}`, { auth, query: { fields: '["title"]', order_by: 'title asc', limit: 0, ...extra } });
  expectOk(res);
  return (res.body.data as Array<{ title: string }>).map((r) => r.title);
}

describe('Guest', () => {
  it('is refused list, get and create with 403', async () => {
    const t = await server.tenant();
    const name = await insert(t, 'ToDo', { description: 'private' });
    expectError(await t.call('GET', '/api/resource/ToDo', { auth: null }), 403, 'PermissionError');
    expectError(await t.call('GET', `/api/resource/ToDo/${name}`, { auth: null }), 403, 'PermissionError');
    expectError(await t.call('POST', '/api/resource/ToDo', { auth: null, json: { description: 'anonymous' } }), 403, 'PermissionError');
    expectError(await t.call('PUT', `/api/resource/ToDo/${name}`, { auth: null, json: { description: 'changed' } }), 403, 'PermissionError');
    expectError(await t.call('DELETE', `/api/resource/ToDo/${name}`, { auth: null }), 403, 'PermissionError');
    const all = await t.call('GET', '/api/resource/ToDo', { query: { fields: '["description"]' } });
    expect(all.body.data).toEqual([{ description: 'private' }]);
  });
});

describe('a user without a role on the DocType', () => {
  it('is refused list, get, create, update and delete with 403', async () => {
    const t = await server.tenant();
    await createRole(t, 'Blogger');
    await createRole(t, 'Clerk');
    await createDocType(t, NOTE);
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    const name = await insert(t, 'Note', { title: 'admin note' });
    expectError(await t.call('GET', '/api/resource/Note', { auth: clerk.auth }), 403, 'PermissionError');
    expectError(await count(t, 'Note', clerk.auth), 403, 'PermissionError');
    expectError(await t.call('GET', `/api/resource/Note/${name}`, { auth: clerk.auth }), 403, 'PermissionError');
    expectError(await t.call('POST', '/api/resource/Note', { auth: clerk.auth, json: { title: 'clerk note' } }), 403, 'PermissionError');
    expectError(await t.call('PUT', `/api/resource/Note/${name}`, { auth: clerk.auth, json: { title: 'changed' } }), 403, 'PermissionError');
    expectError(await t.call('DELETE', `/api/resource/Note/${name}`, { auth: clerk.auth }), 403, 'PermissionError');
    expect(await titles(t, 'Note', t.auth)).toEqual(['admin note']);
  });
});

describe('if_owner', () => {
  let t: TestTenant;
  let alice: TestUser;
  let bob: TestUser;
  const names: Record<string, string> = {};

  beforeAll(async () => {
    t = await server.tenant();
    await createRole(t, 'Blogger');
    await createDocType(t, NOTE);
    alice = await createUser(server, t, 'alice@example.com', ['Blogger']);
    bob = await createUser(server, t, 'bob@example.com', ['Blogger']);
    names.alice1 = await insert(t, 'Note', { title: 'alice 1' }, alice.auth);
    names.alice2 = await insert(t, 'Note', { title: 'alice 2' }, alice.auth);
    names.bob1 = await insert(t, 'Note', { title: 'bob 1' }, bob.auth);
    names.admin1 = await insert(t, 'Note', { title: 'admin 1' });
  });

  it("lists only the caller's own rows", async () => {
    expect(await titles(t, 'Note', alice.auth)).toEqual(['alice 1', 'alice 2']);
    expect(await titles(t, 'Note', bob.auth)).toEqual(['bob 1']);
    expect(await titles(t, 'Note', t.auth)).toEqual(['admin 1', 'alice 1', 'alice 2', 'bob 1']);
  });

  it("never lists another owner's row, whatever the filters, fields or grouping", async () => {
    const asAlice = (query: Record<string, string>) => t.call('GET', '/api/resource/Note', { auth: alice.auth, query });
    const byName = await asAlice({ filters: JSON.stringify({ name: names.bob1 }) });
    expect([byName.status, byName.body.data]).toEqual([200, []]);
    const byOwner = await asAlice({ filters: JSON.stringify([['owner', '=', 'bob@example.com']]), fields: '["name"]' });
    expect([byOwner.status, byOwner.body.data]).toEqual([200, []]);
    const orFilters = await asAlice({
      or_filters: JSON.stringify([
        ['owner', '=', 'bob@example.com'],
        ['owner', '=', 'Administrator'],
      ]),
      fields: '["title"]',
    });
    expect([orFilters.status, orFilters.body.data]).toEqual([200, []]);
    const star = await asAlice({ fields: '["*"]', limit: '0' });
    expect(star.body.data.map((r: { owner: string }) => r.owner)).toEqual(['alice@example.com', 'alice@example.com']);
    const grouped = await asAlice({ fields: '["owner","count(name) as n"]', group_by: 'owner' });
    expect([grouped.status, grouped.body.data]).toEqual([200, [{ owner: 'alice@example.com', n: 2 }]]);
    const v1 = await t.call('GET', '/api/method/frappe.client.get_list', {
      auth: alice.auth,
      query: { doctype: 'Note', fields: '["title"]', order_by: 'title asc' },
    });
    expect(v1.body.message).toEqual([{ title: 'alice 1' }, { title: 'alice 2' }]);
  });

  it("counts only the caller's own rows (frappe.client.get_count)", async () => {
    expect((await count(t, 'Note', alice.auth)).body).toEqual({ message: 2 });
    expect((await count(t, 'Note', bob.auth)).body).toEqual({ message: 1 });
    expect((await count(t, 'Note', alice.auth, { owner: 'bob@example.com' })).body).toEqual({ message: 0 });
    expect((await count(t, 'Note', t.auth)).body).toEqual({ message: 4 });
  });

  it("refuses get of another owner's row with 403", async () => {
    expectOk(await t.call('GET', `/api/resource/Note/${names.alice1}`, { auth: alice.auth }));
    expectError(await t.call('GET', `/api/resource/Note/${names.bob1}`, { auth: alice.auth }), 403, 'PermissionError');
    expectError(await t.call('GET', `/api/resource/Note/${names.admin1}`, { auth: alice.auth }), 403, 'PermissionError');
    expectError(await t.call('GET', `/api/resource/Note/${names.alice1}`, { auth: bob.auth }), 403, 'PermissionError');
  });

  it("refuses update and delete of another owner's row with 403, changing nothing", async () => {
    expectError(await t.call('PUT', `/api/resource/Note/${names.bob1}`, { auth: alice.auth, json: { title: 'hijacked' } }), 403, 'PermissionError');
    expectError(await t.call('PUT', `/api/resource/Note/${names.admin1}`, { auth: alice.auth, json: { title: 'hijacked' } }), 403, 'PermissionError');
    expectError(await t.call('DELETE', `/api/resource/Note/${names.bob1}`, { auth: alice.auth }), 403, 'PermissionError');
    expectError(await t.call('DELETE', `/api/resource/Note/${names.admin1}`, { auth: alice.auth }), 403, 'PermissionError');
    expect(await titles(t, 'Note', t.auth)).toEqual(['admin 1', 'alice 1', 'alice 2', 'bob 1']);
  });

  it('lets the owner update and delete their own row', async () => {
    const own = await insert(t, 'Note', { title: 'alice temp' }, alice.auth);
    const put = await t.call('PUT', `/api/resource/Note/${own}`, { auth: alice.auth, json: { title: 'alice temp 2' } });
    expectOk(put);
    expect(put.body.data.title).toBe('alice temp 2');
    const del = await t.call('DELETE', `/api/resource/Note/${own}`, { auth: alice.auth });
    expect([del.status, del.body]).toEqual([202, { data: 'ok' }]);
    expectError(await t.call('GET', `/api/resource/Note/${own}`), 404, 'DoesNotExistError');
  });

  it('keeps the owner of a row to the creator, whatever the body says', async () => {
    const res = await t.call('POST', '/api/resource/Note', { auth: alice.auth, json: { title: 'forged', owner: 'bob@example.com' } });
    expectOk(res);
    expect(res.body.data.owner).toBe('alice@example.com');
    expectError(await t.call('GET', `/api/resource/Note/${res.body.data.name}`, { auth: bob.auth }), 403, 'PermissionError');
    expect((await t.call('DELETE', `/api/resource/Note/${res.body.data.name}`)).status).toBe(202);
  });

  it('applies the standard ToDo rule: every user sees only their own ToDos', async () => {
    const mine = await insert(t, 'ToDo', { description: 'alice todo' }, alice.auth);
    const theirs = await insert(t, 'ToDo', { description: 'bob todo' }, bob.auth);
    const list = await t.call('GET', '/api/resource/ToDo', { auth: alice.auth, query: { fields: '["name","description"]' } });
    expect(list.body.data).toEqual([{ name: mine, description: 'alice todo' }]);
    expectError(await t.call('GET', `/api/resource/ToDo/${theirs}`, { auth: alice.auth }), 403, 'PermissionError');
    expect((await count(t, 'ToDo', alice.auth)).body).toEqual({ message: 1 });
  });
});

describe('rights one by one', () => {
  it('allows create without write, but not a later update', async () => {
    const t = await server.tenant();
    await createRole(t, 'Submitter');
    await createDocType(t, {
      name: 'Ticket',
      fields: [{ fieldname: 'title', fieldtype: 'Data' }],
      permissions: [{ role: 'Submitter', read: 1, create: 1, write: 0, delete: 0 }],
    });
    const u = await createUser(server, t, 'submitter@example.com', ['Submitter']);
    const created = await t.call('POST', '/api/resource/Ticket', { auth: u.auth, json: { title: 'help' } });
    expectOk(created);
    const name = created.body.data.name;
    expectOk(await t.call('GET', `/api/resource/Ticket/${name}`, { auth: u.auth }));
    expectError(await t.call('PUT', `/api/resource/Ticket/${name}`, { auth: u.auth, json: { title: 'changed' } }), 403, 'PermissionError');
    expectError(await t.call('DELETE', `/api/resource/Ticket/${name}`, { auth: u.auth }), 403, 'PermissionError');
    expect(await titles(t, 'Ticket', t.auth)).toEqual(['help']);
  });

  it('refuses create to a role that has read and write but not create', async () => {
    const t = await server.tenant();
    await createRole(t, 'Editor');
    await createDocType(t, {
      name: 'Ticket',
      fields: [{ fieldname: 'title', fieldtype: 'Data' }],
      permissions: [{ role: 'Editor', read: 1, write: 1, create: 0, delete: 0 }],
    });
    const u = await createUser(server, t, 'editor@example.com', ['Editor']);
    const name = await insert(t, 'Ticket', { title: 'existing' });
    expectError(await t.call('POST', '/api/resource/Ticket', { auth: u.auth, json: { title: 'new' } }), 403, 'PermissionError');
    expectOk(await t.call('PUT', `/api/resource/Ticket/${name}`, { auth: u.auth, json: { title: 'edited' } }));
    expectError(await t.call('DELETE', `/api/resource/Ticket/${name}`, { auth: u.auth }), 403, 'PermissionError');
    expect(await titles(t, 'Ticket', t.auth)).toEqual(['edited']);
  });

  it('requires the submit right for docstatus 1 (403 without it)', async () => {
    const t = await server.tenant();
    await createRole(t, 'Clerk');
    await createRole(t, 'Approver');
    await createDocType(t, {
      name: 'Voucher',
      is_submittable: 1,
      fields: [{ fieldname: 'amount', fieldtype: 'Int' }],
      permissions: [
        { role: 'Clerk', ...FULL },
        { role: 'Approver', ...FULL, submit: 1, cancel: 1 },
      ],
    });
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    const approver = await createUser(server, t, 'approver@example.com', ['Approver']);
    expectError(await t.call('POST', '/api/resource/Voucher', { auth: clerk.auth, json: { amount: 1, docstatus: 1 } }), 403, 'PermissionError');
    const draft = await insert(t, 'Voucher', { amount: 5 }, clerk.auth);
    expectError(await t.call('PUT', `/api/resource/Voucher/${draft}`, { auth: clerk.auth, json: { docstatus: 1 } }), 403, 'PermissionError');
    expect((await t.call('GET', `/api/resource/Voucher/${draft}`)).body.data.docstatus).toBe(0);
    const submitted = await t.call('PUT', `/api/resource/Voucher/${draft}`, { auth: approver.auth, json: { docstatus: 1 } });
    expectOk(submitted);
    expect(submitted.body.data.docstatus).toBe(1);
    expectError(await t.call('PUT', `/api/resource/Voucher/${draft}`, { auth: clerk.auth, json: { docstatus: 2 } }), 403, 'PermissionError');
    const direct = await t.call('POST', '/api/resource/Voucher', { auth: approver.auth, json: { amount: 2, docstatus: 1 } });
    expectOk(direct);
    expect(direct.body.data.docstatus).toBe(1);
    const cancelled = await t.call('PUT', `/api/resource/Voucher/${draft}`, { auth: approver.auth, json: { docstatus: 2 } });
    expectOk(cancelled);
    expect(cancelled.body.data.docstatus).toBe(2);
  });
});

describe('field level (permlevel)', () => {
  let t: TestTenant;
  let alice: TestUser;
  let manager: TestUser;
  let own: string;

  beforeAll(async () => {
    t = await server.tenant();
    await createRole(t, 'Blogger');
    await createDocType(t, NOTE);
    alice = await createUser(server, t, 'alice@example.com', ['Blogger']);
    manager = await createUser(server, t, 'manager@example.com', ['System Manager']);
    own = await insert(t, 'Note', { title: 'alice note' }, alice.auth);
    expectOk(await t.call('PUT', `/api/resource/Note/${own}`, { json: { secret: 'level one' } }));
  });

  it('hides a permlevel-1 field from GET for a user without level-1 read', async () => {
    const res = await t.call('GET', `/api/resource/Note/${own}`, { auth: alice.auth });
    expectOk(res);
    expect(res.body.data.title).toBe('alice note');
    expect(res.body.data).not.toHaveProperty('secret');
    expect(res.text).not.toContain('level one');
  });

  it('hides it from fields=["*"] lists', async () => {
    const res = await t.call('GET', '/api/resource/Note', { auth: alice.auth, query: { fields: '["*"]' } });
    expectOk(res);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].title).toBe('alice note');
    expect(res.body.data[0]).not.toHaveProperty('secret');
    expect(res.text).not.toContain('level one');
  });

  it('drops it when named explicitly in fields', async () => {
    const res = await t.call('GET', '/api/resource/Note', { auth: alice.auth, query: { fields: '["title","secret"]' } });
    expectOk(res);
    expect(res.body.data).toEqual([{ title: 'alice note' }]);
  });

  it('refuses to filter or order on it (417 DataError)', async () => {
    const filtered = await t.call('GET', '/api/resource/Note', { auth: alice.auth, query: { filters: JSON.stringify({ secret: 'level one' }) } });
    expectError(filtered, 417, 'DataError');
    expect(filtered.text).not.toContain(own);
    expectError(await t.call('GET', '/api/resource/Note', { auth: alice.auth, query: { order_by: 'secret desc' } }), 417, 'DataError');
  });

  it('ignores a write to it from a user without level-1 write', async () => {
    const put = await t.call('PUT', `/api/resource/Note/${own}`, { auth: alice.auth, json: { title: 'alice note', secret: 'overwritten' } });
    expectOk(put);
    const created = await t.call('POST', '/api/resource/Note', { auth: alice.auth, json: { title: 'alice new', secret: 'planted' } });
    expectOk(created);
    const asAdmin = await t.call('GET', '/api/resource/Note', { query: { fields: '["title","secret"]', order_by: 'title asc' } });
    expect(asAdmin.body.data).toEqual([
      { title: 'alice new', secret: null },
      { title: 'alice note', secret: 'level one' },
    ]);
  });

  it('shows it to a System Manager, who may also write it', async () => {
    const got = await t.call('GET', `/api/resource/Note/${own}`, { auth: manager.auth });
    expectOk(got);
    expect(got.body.data.secret).toBe('level one');
    const list = await t.call('GET', '/api/resource/Note', { auth: manager.auth, query: { fields: '["*"]', filters: JSON.stringify({ name: own }) } });
    expect(list.body.data[0].secret).toBe('level one');
    const put = await t.call('PUT', `/api/resource/Note/${own}`, { auth: manager.auth, json: { secret: 'changed by manager' } });
    expectOk(put);
    expect(put.body.data.secret).toBe('changed by manager');
    expectOk(await t.call('PUT', `/api/resource/Note/${own}`, { auth: manager.auth, json: { secret: 'level one' } }));
  });
});

describe('Administrator and System Manager', () => {
  it('lets Administrator do everything, even on a DocType whose permissions do not name it', async () => {
    const t = await server.tenant();
    await createRole(t, 'Blogger');
    await createDocType(t, {
      name: 'Diary',
      fields: [
        { fieldname: 'title', fieldtype: 'Data' },
        { fieldname: 'hidden_note', fieldtype: 'Data', permlevel: 2 },
      ],
      permissions: [{ role: 'Blogger', ...FULL, if_owner: 1 }],
    });
    const blogger = await createUser(server, t, 'blogger@example.com', ['Blogger']);
    const theirs = await insert(t, 'Diary', { title: 'blogger entry' }, blogger.auth);
    const mine = await t.call('POST', '/api/resource/Diary', { json: { title: 'admin entry', hidden_note: 'lvl2' } });
    expectOk(mine);
    expect(mine.body.data.hidden_note).toBe('lvl2');
    expect(await titles(t, 'Diary', t.auth)).toEqual(['admin entry', 'blogger entry']);
    expect((await count(t, 'Diary', t.auth)).body).toEqual({ message: 2 });
    expectOk(await t.call('GET', `/api/resource/Diary/${theirs}`));
    expectOk(await t.call('PUT', `/api/resource/Diary/${theirs}`, { json: { title: 'blogger entry, edited' } }));
    expect((await t.call('DELETE', `/api/resource/Diary/${theirs}`)).status).toBe(202);
    expect(await titles(t, 'Diary', blogger.auth)).toEqual([]);
  });

  it('gives a System Manager what its DocPerm rows grant on ToDo: every row', async () => {
    const t = await server.tenant();
    await createRole(t, 'Blogger');
    const manager = await createUser(server, t, 'manager@example.com', ['System Manager']);
    const blogger = await createUser(server, t, 'blogger@example.com', ['Blogger']);
    const theirs = await insert(t, 'ToDo', { description: 'blogger todo' }, blogger.auth);
    await insert(t, 'ToDo', { description: 'admin todo' });
    const list = await t.call('GET', '/api/resource/ToDo', { auth: manager.auth, query: { fields: '["description"]', order_by: 'description asc' } });
    expect(list.body.data).toEqual([{ description: 'admin todo' }, { description: 'blogger todo' }]);
    expect((await count(t, 'ToDo', manager.auth)).body).toEqual({ message: 2 });
    expectOk(await t.call('PUT', `/api/resource/ToDo/${theirs}`, { auth: manager.auth, json: { description: 'edited by manager' } }));
    expect((await t.call('DELETE', `/api/resource/ToDo/${theirs}`, { auth: manager.auth })).status).toBe(202);
  });

  it('gives a System Manager nothing on a DocType whose permissions do not name it', async () => {
    const t = await server.tenant();
    await createRole(t, 'Blogger');
    await createDocType(t, {
      name: 'Diary',
      fields: [{ fieldname: 'title', fieldtype: 'Data' }],
      permissions: [{ role: 'Blogger', ...FULL }],
    });
    const manager = await createUser(server, t, 'manager@example.com', ['System Manager']);
    const name = await insert(t, 'Diary', { title: 'private' });
    expectError(await t.call('GET', '/api/resource/Diary', { auth: manager.auth }), 403, 'PermissionError');
    expectError(await count(t, 'Diary', manager.auth), 403, 'PermissionError');
    expectError(await t.call('GET', `/api/resource/Diary/${name}`, { auth: manager.auth }), 403, 'PermissionError');
    expectError(await t.call('POST', '/api/resource/Diary', { auth: manager.auth, json: { title: 'x' } }), 403, 'PermissionError');
    expectError(await t.call('PUT', `/api/resource/Diary/${name}`, { auth: manager.auth, json: { title: 'x' } }), 403, 'PermissionError');
    expectError(await t.call('DELETE', `/api/resource/Diary/${name}`, { auth: manager.auth }), 403, 'PermissionError');
    // while it may still change DocTypes, as in Frappe
    expectOk(await t.call('GET', '/api/resource/DocType/Diary', { auth: manager.auth }));
  });
});

describe('child tables', () => {
  let t: TestTenant;
  let alice: TestUser;
  let bob: TestUser;
  let outsider: TestUser;
  let aliceOrder: string;
  let bobOrder: string;

  beforeAll(async () => {
    t = await server.tenant();
    await createRole(t, 'Buyer');
    await createRole(t, 'Clerk');
    await createDocType(t, { name: 'Order Item', istable: 1, fields: [{ fieldname: 'item', fieldtype: 'Data' }] });
    await createDocType(t, {
      name: 'Purchase',
      fields: [
        { fieldname: 'title', fieldtype: 'Data' },
        { fieldname: 'items', fieldtype: 'Table', options: 'Order Item' },
      ],
      permissions: [
        { role: 'System Manager', ...FULL },
        { role: 'Buyer', ...FULL, if_owner: 1 },
      ],
    });
    alice = await createUser(server, t, 'alice@example.com', ['Buyer']);
    bob = await createUser(server, t, 'bob@example.com', ['Buyer']);
    outsider = await createUser(server, t, 'outsider@example.com', ['Clerk']);
    aliceOrder = await insert(t, 'Purchase', { title: 'alice order', items: [{ item: 'apple' }, { item: 'apricot' }] }, alice.auth);
    bobOrder = await insert(t, 'Purchase', { title: 'bob order', items: [{ item: 'banana' }] }, bob.auth);
  });

  const items = (auth: string, query: Record<string, string>) =>
    t.call('GET', '/api/resource/Order Item', { auth, query: { fields: '["item","parent"]', order_by: 'item asc', ...query } });

  it('lists child rows through their parent DocType', async () => {
    const res = await items(t.auth, { parent: 'Purchase' });
    expectOk(res);
    expect(res.body.data).toEqual([
      { item: 'apple', parent: aliceOrder },
      { item: 'apricot', parent: aliceOrder },
      { item: 'banana', parent: bobOrder },
    ]);
  });

  it('refuses a child-table list without parent (403)', async () => {
    expectError(await items(t.auth, {}), 403, 'PermissionError');
    expectError(await items(alice.auth, {}), 403, 'PermissionError');
    expectError(await items(alice.auth, { parent: 'ToDo' }), 403, 'PermissionError');
    expectError(await items(alice.auth, { parent: 'No Such DocType' }), 403, 'PermissionError');
  });

  it('requires read permission on the parent (403 without it)', async () => {
    expectError(await items(outsider.auth, { parent: 'Purchase' }), 403, 'PermissionError');
    expectError(await t.call('GET', '/api/resource/Order Item', { auth: null, query: { parent: 'Purchase' } }), 403, 'PermissionError');
  });

  it('returns only the child rows of parents the caller may read', async () => {
    const res = await items(alice.auth, { parent: 'Purchase' });
    expectOk(res);
    expect(res.body.data).toEqual([
      { item: 'apple', parent: aliceOrder },
      { item: 'apricot', parent: aliceOrder },
    ]);
    const bobs = await items(bob.auth, { parent: 'Purchase', filters: JSON.stringify({ parent: aliceOrder }) });
    expect([bobs.status, bobs.body.data]).toEqual([200, []]);
    const bobCount = await t.call('GET', '/api/method/frappe.client.get_count', { auth: bob.auth, query: { doctype: 'Order Item', parent: 'Purchase' } });
    expect([bobCount.status, bobCount.body]).toEqual([200, { message: 1 }]);
  });

  it("refuses the parent document's child rows to others through the parent (403)", async () => {
    expectError(await t.call('GET', `/api/resource/Purchase/${aliceOrder}`, { auth: bob.auth }), 403, 'PermissionError');
    const own = await t.call('GET', `/api/resource/Purchase/${aliceOrder}`, { auth: alice.auth });
    expectOk(own);
    expect(own.body.data.items.map((r: { item: string }) => r.item)).toEqual(['apple', 'apricot']);
  });
});
