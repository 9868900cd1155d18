import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminSdk, sdkFor } from '../support/frappe-js-sdk';
import { createDocType, createRole, createUser, expectError, expectOk, type TestUser } from '../platform/helpers';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * A document's history and conversation through the API, as Frappe serves them: Versions from
 * track_changes, Comments (frappe.desk.form.utils), assignments (frappe.desk.form.assign_to) and the
 * form's docinfo (frappe.desk.form.load.getdoc / get_docinfo).
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(async () => {
  await server.close();
});

type Diff = {
  changed: Array<[string, unknown, unknown]>;
  added: Array<[string, Record<string, unknown>]>;
  removed: Array<[string, Record<string, unknown>]>;
  row_changed: Array<[string, number, string, Array<[string, unknown, unknown]>]>;
  data_import: null;
  updater_reference: null;
};

async function versionsOf(t: TestTenant, doctype: string, name: string): Promise<Array<{ name: string; owner: string; data: Diff }>> {
  const res = await t.call('GET', '/api/resource/Version', {
    query: { filters: JSON.stringify({ ref_doctype: doctype, docname: name }), fields: JSON.stringify(['name', 'owner', 'data']), order_by: 'creation asc' },
  });
  expectOk(res);
  return (res.body.data as Array<{ name: string; owner: string; data: string }>).map((v) => ({ ...v, data: JSON.parse(v.data) as Diff }));
}

async function insert(t: TestTenant, doctype: string, doc: object, auth?: string): Promise<Record<string, any>> {
  const res = await t.call('POST', `/api/resource/${doctype}`, { json: doc, ...(auth ? { auth } : {}) });
  expectOk(res);
  return res.body.data;
}

async function update(t: TestTenant, doctype: string, name: string, patch: object, auth?: string): Promise<Record<string, any>> {
  const res = await t.call('PUT', `/api/resource/${doctype}/${encodeURIComponent(name)}`, { json: patch, ...(auth ? { auth } : {}) });
  expectOk(res);
  return res.body.data;
}

function method(t: TestTenant, path: string, json: object, auth?: string) {
  return t.call('POST', `/api/method/${path}`, { json, ...(auth ? { auth } : {}) });
}

describe('Versions from track_changes', () => {
  it('a ToDo save records what changed, old and new, written by the platform for a user who may not create Versions', async () => {
    const t = await server.tenant();
    const user = await createUser(server, t, 'writer@example.com', []);
    const todo = await insert(t, 'ToDo', { description: 'Call back', priority: 'Medium' }, user.auth);
    expect(await versionsOf(t, 'ToDo', todo.name)).toEqual([]); // an insert records none, as in Frappe

    await update(t, 'ToDo', todo.name, { priority: 'High', date: '2026-12-01' }, user.auth);
    await update(t, 'ToDo', todo.name, { priority: 'High' }, user.auth); // nothing changed: no Version

    const versions = await versionsOf(t, 'ToDo', todo.name);
    expect(versions).toHaveLength(1);
    expect(versions[0]?.owner).toBe('writer@example.com');
    expect(versions[0]?.data).toEqual({
      added: [],
      changed: [
        ['priority', 'Medium', 'High'],
        ['date', null, '2026-12-01'],
      ],
      data_import: null,
      removed: [],
      row_changed: [],
      updater_reference: null,
    });
    // The writer holds no right on Version itself.
    expectError(await t.call('GET', '/api/resource/Version', { auth: user.auth }), 403, 'PermissionError');
  });

  it('a child table records rows added, removed and changed', async () => {
    const t = await server.tenant();
    await createDocType(t, {
      name: 'Hist Line',
      module: 'Custom',
      istable: 1,
      fields: [
        { fieldname: 'item', fieldtype: 'Data' },
        { fieldname: 'qty', fieldtype: 'Int' },
      ],
    });
    await createDocType(t, {
      name: 'Hist Order',
      module: 'Custom',
      track_changes: 1,
      fields: [
        { fieldname: 'title', fieldtype: 'Data' },
        { fieldname: 'lines', fieldtype: 'Table', options: 'Hist Line' },
      ],
      permissions: [{ role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 }],
    });
    const order = await insert(t, 'Hist Order', {
      title: 'First',
      lines: [
        { item: 'a', qty: 1 },
        { item: 'b', qty: 2 },
      ],
    });
    const [a, b] = order.lines as Array<Record<string, any>>;
    await update(t, 'Hist Order', order.name, {
      title: 'Second',
      lines: [
        { ...a, qty: 5 },
        { item: 'c', qty: 3 },
      ],
    });

    const [version] = await versionsOf(t, 'Hist Order', order.name);
    const data = version!.data;
    expect(data.changed).toEqual([['title', 'First', 'Second']]);
    expect(data.row_changed).toEqual([['lines', 0, a!.name, [['qty', 1, 5]]]]);
    expect(data.added).toHaveLength(1);
    expect(data.added[0]?.[0]).toBe('lines');
    expect(data.added[0]?.[1]).toMatchObject({ item: 'c', qty: 3, doctype: 'Hist Line', parent: order.name, parentfield: 'lines' });
    expect(data.removed).toEqual([['lines', expect.objectContaining({ name: b!.name, item: 'b', qty: 2 })]]);
  });

  it('a reader without the permlevel of a field does not see its values in the timeline', async () => {
    const t = await server.tenant();
    await createRole(t, 'Hist Reader');
    await createDocType(t, {
      name: 'Hist Secret',
      module: 'Custom',
      track_changes: 1,
      fields: [
        { fieldname: 'title', fieldtype: 'Data' },
        { fieldname: 'salary', fieldtype: 'Int', permlevel: 1 },
      ],
      permissions: [
        { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
        { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
        { role: 'Hist Reader', read: 1 },
      ],
    });
    const reader = await createUser(server, t, 'reader@example.com', ['Hist Reader']);
    const doc = await insert(t, 'Hist Secret', { title: 'Ann', salary: 100 });
    await update(t, 'Hist Secret', doc.name, { title: 'Anne', salary: 200 });
    await update(t, 'Hist Secret', doc.name, { salary: 300 });

    const mine = await method(t, 'frappe.desk.form.load.get_docinfo', { doctype: 'Hist Secret', name: doc.name });
    expectOk(mine);
    expect(mine.body.docinfo.versions.map((v: { data: string }) => JSON.parse(v.data).changed)).toEqual([
      [['salary', 200, 300]],
      [
        ['title', 'Ann', 'Anne'],
        ['salary', 100, 200],
      ],
    ]);

    const theirs = await method(t, 'frappe.desk.form.load.get_docinfo', { doctype: 'Hist Secret', name: doc.name }, reader.auth);
    expectOk(theirs);
    const versions = theirs.body.docinfo.versions as Array<{ data: string }>;
    expect(versions.map((v) => JSON.parse(v.data).changed)).toEqual([[['title', 'Ann', 'Anne']]]);
    expect(JSON.stringify(theirs.body.docinfo.versions)).not.toContain('salary');
  });
});

describe('comments', () => {
  it('add_comment answers the Comment, sanitised, and keeps the document’s _comments; its owner may delete it', async () => {
    const t = await server.tenant();
    const user = await createUser(server, t, 'commenter@example.com', []);
    const todo = await insert(t, 'ToDo', { description: 'Mine' }, user.auth);

    const res = await method(
      t,
      'frappe.desk.form.utils.add_comment',
      {
        reference_doctype: 'ToDo',
        reference_name: todo.name,
        content: '<p>Looks <b>good</b><script>alert(1)</script><img src=x onerror=alert(1)></p>',
        comment_email: 'someone-else@example.com',
        comment_by: 'Commenter',
      },
      user.auth,
    );
    expectOk(res);
    const comment = res.body.message;
    expect(comment).toMatchObject({
      doctype: 'Comment',
      comment_type: 'Comment',
      reference_doctype: 'ToDo',
      reference_name: todo.name,
      comment_email: 'commenter@example.com',
      comment_by: 'Commenter',
      owner: 'commenter@example.com',
      content: '<p>Looks <b>good</b><img src="x"></p>',
    });
    expect(comment.published).toBe(0);

    const stored = await t.call('GET', `/api/resource/ToDo/${todo.name}`, { auth: user.auth });
    expect(JSON.parse(stored.body.data._comments)).toEqual([
      { comment: '<p>Looks <b>good</b><img src="x"></p>', by: 'commenter@example.com', name: comment.name },
    ]);
    expect(stored.body.data.modified).toBe(todo.modified); // _comments does not touch the document

    const edited = await method(t, 'frappe.desk.form.utils.update_comment', { name: comment.name, content: 'Edited' }, user.auth);
    expectOk(edited);
    const other = await createUser(server, t, 'other@example.com', []);
    expectError(await method(t, 'frappe.desk.form.utils.update_comment', { name: comment.name, content: 'Hijack' }, other.auth), 403, 'PermissionError');
    const afterEdit = await t.call('GET', `/api/resource/ToDo/${todo.name}`);
    expect(JSON.parse(afterEdit.body.data._comments)).toEqual([{ comment: 'Edited', by: 'commenter@example.com', name: comment.name }]);

    expectError(await t.call('DELETE', `/api/resource/Comment/${comment.name}`, { auth: other.auth }), 403, 'PermissionError');
    expectOk(await t.call('DELETE', `/api/resource/Comment/${comment.name}`, { auth: user.auth }), 202);
    const afterDelete = await t.call('GET', `/api/resource/ToDo/${todo.name}`);
    expect(JSON.parse(afterDelete.body.data._comments ?? '[]')).toEqual([]);
  });

  it('a user who may not read the document cannot comment on it (403), nor on a missing one (404)', async () => {
    const t = await server.tenant();
    const owner = await createUser(server, t, 'owner@example.com', []);
    const stranger = await createUser(server, t, 'stranger@example.com', []);
    const todo = await insert(t, 'ToDo', { description: 'Private' }, owner.auth);
    const args = { reference_doctype: 'ToDo', reference_name: todo.name, content: 'Hi', comment_email: 'x', comment_by: 'x' };
    expectError(await method(t, 'frappe.desk.form.utils.add_comment', args, stranger.auth), 403, 'PermissionError');
    expectError(await method(t, 'frappe.desk.form.utils.add_comment', { ...args, reference_name: 'nope' }, owner.auth), 404, 'DoesNotExistError');
    const comments = await t.call('GET', '/api/resource/Comment', { query: { filters: JSON.stringify({ reference_name: todo.name }) } });
    expect(comments.body.data).toEqual([]);
  });

  it('frappe-js-sdk’s call reaches add_comment', async () => {
    const t = await server.tenant();
    const todo = await insert(t, 'ToDo', { description: 'Through the SDK' });
    const sdk = adminSdk(server, t);
    const answer = await sdk.call().post('frappe.desk.form.utils.add_comment', {
      reference_doctype: 'ToDo',
      reference_name: todo.name,
      content: 'From the SDK',
      comment_email: 'Administrator',
      comment_by: 'Administrator',
    });
    expect(answer.message).toMatchObject({ doctype: 'Comment', content: 'From the SDK', reference_name: todo.name });
    const docinfo = await sdkFor(server.url, t.name, `${t.api_key}:${t.api_secret}`)
      .call()
      .get('frappe.desk.form.load.get_docinfo', { doctype: 'ToDo', name: todo.name });
    expect(docinfo.docinfo.comments.map((c: { content: string }) => c.content)).toEqual(['From the SDK']);
  });
});

describe('assignments', () => {
  async function setup(): Promise<{ t: TestTenant; alice: TestUser; bob: TestUser; noRead: TestUser; docs: string[] }> {
    const t = await server.tenant();
    await createRole(t, 'Hist Worker');
    await createDocType(t, {
      name: 'Hist Task',
      module: 'Custom',
      track_changes: 1,
      fields: [{ fieldname: 'subject', fieldtype: 'Data' }],
      permissions: [
        { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
        { role: 'Hist Worker', read: 1, write: 1 },
      ],
    });
    const alice = await createUser(server, t, 'alice@example.com', ['Hist Worker']);
    const bob = await createUser(server, t, 'bob@example.com', ['Hist Worker']);
    const noRead = await createUser(server, t, 'noread@example.com', []);
    const docs: string[] = [];
    for (const subject of ['One', 'Two', 'Three']) docs.push((await insert(t, 'Hist Task', { subject })).name);
    return { t, alice, bob, noRead, docs };
  }

  const assignedOf = async (t: TestTenant, name: string): Promise<unknown> =>
    JSON.parse((await t.call('GET', `/api/resource/Hist Task/${name}`)).body.data._assign ?? '[]');

  it('add makes one open ToDo per user, keeps _assign, writes an Assigned comment, and tells of users already assigned', async () => {
    const { t, alice, docs } = await setup();
    const [doc] = docs as [string];
    const res = await method(t, 'frappe.desk.form.assign_to.add', {
      assign_to: JSON.stringify(['alice@example.com', 'bob@example.com']),
      doctype: 'Hist Task',
      name: doc,
      description: 'Please look',
      date: '2026-12-24',
      priority: 'High',
    });
    expectOk(res);
    expect(res.body.message.map((a: { owner: string }) => a.owner).sort()).toEqual(['alice@example.com', 'bob@example.com']);
    expect(res.body.message[0]).toEqual({ owner: expect.any(String), name: expect.any(String) });
    expect(await assignedOf(t, doc)).toEqual(['alice@example.com', 'bob@example.com']);

    const todos = await t.call('GET', '/api/resource/ToDo', {
      query: {
        filters: JSON.stringify({ reference_name: doc }),
        fields: JSON.stringify(['allocated_to', 'reference_type', 'description', 'date', 'priority', 'status', 'assigned_by']),
      },
    });
    expect(todos.body.data).toHaveLength(2);
    expect(todos.body.data[0]).toMatchObject({
      reference_type: 'Hist Task',
      description: 'Please look',
      date: '2026-12-24',
      priority: 'High',
      status: 'Open',
      assigned_by: 'Administrator',
    });

    // Assigning Alice again is no error: Frappe tells it in a message.
    const again = await method(t, 'frappe.desk.form.assign_to.add', { assign_to: ['alice@example.com'], doctype: 'Hist Task', name: doc });
    expectOk(again);
    expect(JSON.parse(again.body._server_messages).map((m: string) => JSON.parse(m).message)).toEqual([
      'Already in the following Users ToDo list:<br><br>alice@example.com',
    ]);
    expect(again.body.message).toHaveLength(2);

    // Alice sees it in the document's docinfo (assignments, assignment_logs, user_info).
    const info = await method(t, 'frappe.desk.form.load.get_docinfo', { doctype: 'Hist Task', name: doc }, alice.auth);
    expectOk(info);
    expect(info.body.docinfo.assignments.map((a: { owner: string }) => a.owner).sort()).toEqual(['alice@example.com', 'bob@example.com']);
    expect(info.body.docinfo.assignments[0]).toEqual({ name: expect.any(String), owner: expect.any(String), description: 'Please look', status: 'Open' });
    expect(info.body.docinfo.assignment_logs.map((c: { content: string }) => c.content).sort()).toEqual([
      'Administrator assigned alice: Please look',
      'Administrator assigned bob: Please look',
    ]);
    expect(info.body.docinfo.user_info['alice@example.com']).toEqual({
      fullname: 'alice',
      image: null,
      name: 'alice@example.com',
      email: 'alice@example.com',
      time_zone: null,
    });
  });

  it('assignments of one document made at the same time all end up in _assign', async () => {
    const { t, docs } = await setup();
    const users = ['p1@example.com', 'p2@example.com', 'p3@example.com', 'p4@example.com'];
    for (const email of users) await createUser(server, t, email, ['Hist Worker']);
    const answers = await Promise.all(users.map((u) => method(t, 'frappe.desk.form.assign_to.add', { assign_to: [u], doctype: 'Hist Task', name: docs[0] })));
    for (const res of answers) expectOk(res);
    expect(((await assignedOf(t, docs[0]!)) as string[]).sort()).toEqual(users);
    // The same user assigned twice at once gets one ToDo: the second is told it is already there.
    const twice = await Promise.all(
      [1, 2].map(() => method(t, 'frappe.desk.form.assign_to.add', { assign_to: ['alice@example.com'], doctype: 'Hist Task', name: docs[1] })),
    );
    for (const res of twice) expectOk(res);
    const todos = await t.call('GET', '/api/resource/ToDo', {
      query: { filters: JSON.stringify({ reference_name: docs[1], allocated_to: 'alice@example.com' }) },
    });
    expect(todos.body.data).toHaveLength(1);
  });

  it('a user who may not read the document cannot be assigned (Missing Permission), and nothing is kept', async () => {
    const { t, docs } = await setup();
    const res = await method(t, 'frappe.desk.form.assign_to.add', {
      assign_to: ['alice@example.com', 'noread@example.com'],
      doctype: 'Hist Task',
      name: docs[0],
    });
    expectError(res, 417, 'ValidationError');
    expect(res.body.exception).toContain('noread@example.com');
    const todos = await t.call('GET', '/api/resource/ToDo', { query: { filters: JSON.stringify({ reference_name: docs[0] }) } });
    expect(todos.body.data).toEqual([]);
    expect(await assignedOf(t, docs[0]!)).toEqual([]);
  });

  it('a caller who may not read the document cannot assign it', async () => {
    const { t, noRead, docs } = await setup();
    expectError(
      await method(t, 'frappe.desk.form.assign_to.add', { assign_to: ['alice@example.com'], doctype: 'Hist Task', name: docs[0] }, noRead.auth),
      403,
      'PermissionError',
    );
  });

  it('remove cancels the ToDo and updates _assign; add_multiple assigns every named document', async () => {
    const { t, alice, docs } = await setup();
    const multiple = await method(t, 'frappe.desk.form.assign_to.add_multiple', {
      assign_to: JSON.stringify(['alice@example.com', 'bob@example.com']),
      doctype: 'Hist Task',
      name: JSON.stringify(docs),
      description: 'Bulk',
    });
    expectOk(multiple);
    for (const doc of docs) expect(await assignedOf(t, doc)).toEqual(['alice@example.com', 'bob@example.com']);

    // Alice removes her own assignment from the first document.
    const removed = await method(t, 'frappe.desk.form.assign_to.remove', { doctype: 'Hist Task', name: docs[0], assign_to: 'alice@example.com' }, alice.auth);
    expectOk(removed);
    expect(removed.body.message.map((a: { owner: string }) => a.owner)).toEqual(['bob@example.com']);
    expect(await assignedOf(t, docs[0]!)).toEqual(['bob@example.com']);
    const todo = await t.call('GET', '/api/resource/ToDo', {
      query: { filters: JSON.stringify({ reference_name: docs[0], allocated_to: 'alice@example.com' }), fields: JSON.stringify(['status']) },
    });
    expect(todo.body.data).toEqual([{ status: 'Cancelled' }]);

    const got = await method(t, 'frappe.desk.form.assign_to.get', { doctype: 'Hist Task', name: docs[0] });
    expect(got.body.message).toEqual([{ owner: 'bob@example.com', name: expect.any(String) }]);
    const logs = await method(t, 'frappe.desk.form.load.get_docinfo', { doctype: 'Hist Task', name: docs[0] });
    expect(logs.body.docinfo.assignment_logs.map((c: { comment_type: string; content: string }) => [c.comment_type, c.content])).toContainEqual([
      'Assignment Completed',
      'alice removed their assignment.',
    ]);
  });
});

describe('bad arguments', () => {
  it('answer 417 with Frappe’s envelope, never a 5xx', async () => {
    const t = await server.tenant();
    const todo = await insert(t, 'ToDo', { description: 'Target' });
    const cases: Array<[string, object]> = [
      ['frappe.desk.form.utils.add_comment', { reference_doctype: 'ToDo', reference_name: todo.name }],
      ['frappe.desk.form.utils.add_comment', { reference_name: todo.name, content: 'x' }],
      ['frappe.desk.form.utils.update_comment', { content: 'x' }],
      ['frappe.desk.form.assign_to.add', { assign_to: ['Administrator'], name: todo.name }],
      ['frappe.desk.form.assign_to.add', { assign_to: '[1, {"a": 2}]', doctype: 'ToDo', name: todo.name }],
      ['frappe.desk.form.assign_to.add', { assign_to: '[not json', doctype: 'ToDo', name: todo.name }],
      ['frappe.desk.form.assign_to.add', { args: '"text"' }],
      ['frappe.desk.form.assign_to.add_multiple', { assign_to: ['Administrator'], doctype: 'ToDo', name: '[]' }],
      ['frappe.desk.form.assign_to.remove', { doctype: 'ToDo', name: todo.name }],
      ['frappe.desk.form.load.get_docinfo', { doctype: 'ToDo' }],
      ['frappe.desk.form.load.getdoc', { name: todo.name }],
    ];
    for (const [path, args] of cases) {
      const res = await method(t, path, args);
      expect({ path, args, status: res.status, exc_type: res.body?.exc_type }).toEqual({ path, args, status: 417, exc_type: 'ValidationError' });
    }
    // An unknown user is refused by the ToDo's link to User.
    const unknown = await method(t, 'frappe.desk.form.assign_to.add', { assign_to: ['ghost@example.com'], doctype: 'ToDo', name: todo.name });
    expect(unknown.status).toBe(417);
  });
});

describe('deleting a document', () => {
  it('takes its ToDos, Comments and Versions with it, and leaves other documents’ history alone', async () => {
    const t = await server.tenant();
    const [gone, kept] = [await insert(t, 'ToDo', { description: 'Gone' }), await insert(t, 'ToDo', { description: 'Kept' })];
    for (const doc of [gone, kept]) {
      await update(t, 'ToDo', doc.name, { priority: 'High' });
      expectOk(
        await method(t, 'frappe.desk.form.utils.add_comment', {
          reference_doctype: 'ToDo',
          reference_name: doc.name,
          content: 'note',
          comment_email: '',
          comment_by: '',
        }),
      );
      expectOk(await method(t, 'frappe.desk.form.assign_to.add', { assign_to: ['Administrator'], doctype: 'ToDo', name: doc.name }));
    }
    const history = async (name: string) => {
      const count = async (doctype: string, filters: object) =>
        ((await t.call('GET', '/api/resource/' + doctype, { query: { filters: JSON.stringify(filters), limit_page_length: 0 } })).body.data as unknown[])
          .length;
      return {
        versions: await count('Version', { ref_doctype: 'ToDo', docname: name }),
        comments: await count('Comment', { reference_doctype: 'ToDo', reference_name: name }),
        todos: await count('ToDo', { reference_type: 'ToDo', reference_name: name }),
      };
    };
    expect(await history(gone.name)).toEqual({ versions: 1, comments: 2, todos: 1 }); // the comment and the "Assigned" line

    expectOk(await t.call('DELETE', `/api/resource/ToDo/${gone.name}`), 202);

    expect(await history(gone.name)).toEqual({ versions: 0, comments: 0, todos: 0 });
    expect(await history(kept.name)).toEqual({ versions: 1, comments: 2, todos: 1 });
  });
});

describe('getdoc and get_docinfo', () => {
  it('getdoc answers the document in docs (as frappe.client.get does, without nulls) and docinfo in Frappe’s shape', async () => {
    const t = await server.tenant();
    const todo = await insert(t, 'ToDo', { description: 'Shape' });
    await update(t, 'ToDo', todo.name, { priority: 'Low' });
    expectOk(
      await method(t, 'frappe.desk.form.utils.add_comment', {
        reference_doctype: 'ToDo',
        reference_name: todo.name,
        content: 'Hello',
        comment_email: '',
        comment_by: '',
      }),
    );

    const res = await t.call('GET', '/api/method/frappe.desk.form.load.getdoc', { query: { doctype: 'ToDo', name: todo.name } });
    expectOk(res);
    expect(res.body.message).toBeUndefined();
    const client = await t.call('GET', '/api/method/frappe.client.get', { query: { doctype: 'ToDo', name: todo.name } });
    const withoutNulls = Object.fromEntries(Object.entries(client.body.message as Record<string, unknown>).filter(([, v]) => v !== null));
    expect(res.body.docs).toEqual([withoutNulls]);

    const docinfo = res.body.docinfo;
    expect(Object.keys(docinfo).sort()).toEqual(
      [
        'user_info',
        'comments',
        'shared',
        'assignment_logs',
        'attachment_logs',
        'info_logs',
        'like_logs',
        'workflow_logs',
        'doctype',
        'name',
        'attachments',
        'communications',
        'automated_messages',
        'versions',
        'assignments',
        'permissions',
        'views',
        'additional_timeline_content',
        'milestones',
        'is_document_followed',
        'tags',
        'document_email',
      ].sort(),
    );
    expect(docinfo).toMatchObject({ doctype: 'ToDo', name: todo.name, communications: [], shared: [], views: [], attachments: [], assignments: [] });
    expect(docinfo.comments).toEqual([
      { name: expect.any(String), creation: expect.any(String), content: 'Hello', owner: 'Administrator', comment_type: 'Comment', published: 0 },
    ]);
    expect(docinfo.versions).toEqual([{ name: expect.any(String), owner: 'Administrator', creation: expect.any(String), data: expect.any(String) }]);
    expect(JSON.parse(docinfo.versions[0].data).changed).toEqual([['priority', 'Medium', 'Low']]);
    expect(docinfo.permissions).toMatchObject({ read: 1, write: 1, delete: 1 });
    expect(docinfo.user_info.Administrator).toMatchObject({ name: 'Administrator', fullname: 'Administrator' });

    const info = await t.call('GET', '/api/method/frappe.desk.form.load.get_docinfo', { query: { doctype: 'ToDo', name: todo.name } });
    expectOk(info);
    expect(info.body.docinfo).toEqual(docinfo);
  });

  it('getdoc reads a Single, whose saves are tracked like any document’s', async () => {
    const t = await server.tenant();
    await createDocType(t, { name: 'Hist Settings', module: 'Custom', issingle: 1, track_changes: 1, fields: [{ fieldname: 'motto', fieldtype: 'Data' }] });
    await update(t, 'Hist Settings', 'Hist Settings', { motto: 'Ship it' });
    await update(t, 'Hist Settings', 'Hist Settings', { motto: 'Ship it well' });
    const res = await t.call('GET', '/api/method/frappe.desk.form.load.getdoc', { query: { doctype: 'Hist Settings', name: 'Hist Settings' } });
    expectOk(res);
    expect(res.body.docs).toEqual([expect.objectContaining({ doctype: 'Hist Settings', name: 'Hist Settings', motto: 'Ship it well' })]);
    expect(res.body.docinfo.versions.map((v: { data: string }) => JSON.parse(v.data).changed)).toEqual([
      [['motto', 'Ship it', 'Ship it well']],
      [['motto', null, 'Ship it']],
    ]);
  });

  it('an attachment shows in docinfo; a missing document is [] from getdoc and 404 from get_docinfo; a stranger is refused', async () => {
    const t = await server.tenant();
    const owner = await createUser(server, t, 'holder@example.com', []);
    const stranger = await createUser(server, t, 'nosy@example.com', []);
    const todo = await insert(t, 'ToDo', { description: 'With a file' }, owner.auth);
    const file = await insert(
      t,
      'File',
      { file_name: 'note.txt', file_url: 'https://example.com/note.txt', attached_to_doctype: 'ToDo', attached_to_name: todo.name },
      owner.auth,
    );

    const res = await t.call('GET', '/api/method/frappe.desk.form.load.getdoc', { query: { doctype: 'ToDo', name: todo.name }, auth: owner.auth });
    expectOk(res);
    expect(res.body.docinfo.attachments).toEqual([
      expect.objectContaining({ name: file.name, file_name: 'note.txt', file_url: 'https://example.com/note.txt', is_private: 0 }),
    ]);

    const missing = await t.call('GET', '/api/method/frappe.desk.form.load.getdoc', { query: { doctype: 'ToDo', name: 'nope' }, auth: owner.auth });
    expectOk(missing);
    expect(missing.body.message).toEqual([]);
    expectError(await t.call('GET', '/api/method/frappe.desk.form.load.get_docinfo', { query: { doctype: 'ToDo', name: 'nope' } }), 404, 'DoesNotExistError');
    expectError(
      await t.call('GET', '/api/method/frappe.desk.form.load.getdoc', { query: { doctype: 'ToDo', name: todo.name }, auth: stranger.auth }),
      403,
      'PermissionError',
    );
    expectError(
      await t.call('GET', '/api/method/frappe.desk.form.load.get_docinfo', { query: { doctype: 'ToDo', name: todo.name }, auth: stranger.auth }),
      403,
      'PermissionError',
    );
  });
});
