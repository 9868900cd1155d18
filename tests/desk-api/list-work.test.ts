import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, serverMessages } from '../record-api/helpers';
import { ALL_RIGHTS, postDoctype } from '../support/doctypes';
import { adminSdk } from '../support/frappe-js-sdk';
import { startTestServer, type TestServer } from '../support/server';
import { callMethod, listWorkTenant, make, names, type ListWorkTenant } from './list-work-support';

/**
 * The API behind a list's selection and settings, over HTTP on real Postgres: bulk delete
 * (frappe.desk.reportview.delete_items), bulk edit (submit_cancel_or_update_docs), CSV export
 * (export_query), per-user list settings (frappe.model.utils.user_settings) and the sidebar's
 * counts (frappe.desk.listview.get_group_by_count). The background-job halves are in
 * list-work-jobs.test.ts.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(() => server.close());

const DELETE_ITEMS = 'frappe.desk.reportview.delete_items';
const BULK = 'frappe.desk.doctype.bulk_update.bulk_update.submit_cancel_or_update_docs';
const EXPORT = 'frappe.desk.reportview.export_query';
const GROUP_BY = 'frappe.desk.listview.get_group_by_count';

describe('delete_items', () => {
  let w: ListWorkTenant;
  beforeAll(async () => {
    w = await listWorkTenant(server, 'del');
  }, 60_000);

  it('deletes every named document, each on its own: a linked one is refused with its reason while the rest go', async () => {
    const { t } = w;
    const [a, b, c] = [await make(t, 'Project', { title: 'A' }), await make(t, 'Project', { title: 'B' }), await make(t, 'Project', { title: 'C' })];
    const task = await make(t, 'Project Task', { subject: 'uses B', project: b });
    const res = await callMethod(t, 'POST', DELETE_ITEMS, { doctype: 'Project', items: [a, b, c] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toEqual([b]);
    const messages = serverMessages(res.body);
    expect(messages).toContain(`Cannot delete or cancel because Project ${b} is linked with Project Task ${task}`);
    expect(messages).toContain(`Failed to delete 1 documents: ${b}`);
    expect(await names(t, 'Project')).toEqual([b]);
  });

  it('tries again those refused while a pass deletes others (a Project linked only from another one of the selection); a name sent twice counts once', async () => {
    const { t } = w;
    const parent = await make(t, 'Project', { title: 'parent' });
    const child = await make(t, 'Project', { title: 'child', parent_project: parent });
    const res = await callMethod(t, 'DELETE', DELETE_ITEMS, { doctype: 'Project', items: [parent, child, parent] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toEqual([]);
    expect(serverMessages(res.body)).toContain('Deleted 2 records from Project doctype');
    const left = await names(t, 'Project');
    expect(left).not.toContain(parent);
    expect(left).not.toContain(child);
  });

  it('refuses a submitted document (cancel first) and deletes the draft', async () => {
    const { t } = w;
    const draft = await make(t, 'Expense', { title: 'draft' });
    const submitted = await make(t, 'Expense', { title: 'submitted', docstatus: 1 });
    const res = await callMethod(t, 'POST', DELETE_ITEMS, { doctype: 'Expense', items: [draft, submitted] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toEqual([submitted]);
    expect(serverMessages(res.body)).toContain(`Expense ${submitted}: Submitted Record cannot be deleted. You must Cancel it first.`);
    expect(await names(t, 'Expense')).toEqual([submitted]);
  });

  it('a user without the delete right gets 403 and nothing is deleted; one with it only for their own documents deletes only theirs', async () => {
    const { t, viewer, owner } = w;
    const mine = await make(t, 'Project', { title: 'owner’s' }, owner.auth);
    const admins = await make(t, 'Project', { title: 'admin’s' });
    const refused = await callMethod(t, 'POST', DELETE_ITEMS, { doctype: 'Project', items: [mine, admins] }, viewer.auth);
    expectError(refused, 403, 'PermissionError');
    expect(await names(t, 'Project')).toEqual(expect.arrayContaining([mine, admins]));

    const partly = await callMethod(t, 'POST', DELETE_ITEMS, { doctype: 'Project', items: [mine, admins] }, owner.auth);
    expect(partly.status, partly.text).toBe(200);
    expect(partly.body.message).toEqual([admins]);
    const left = await names(t, 'Project');
    expect(left).toContain(admins);
    expect(left).not.toContain(mine);
  });

  it('refuses GET, bad items and an unknown DocType with Frappe’s errors', async () => {
    const { t } = w;
    expectError(await t.call('GET', `/api/method/${DELETE_ITEMS}`, { query: { doctype: 'Project', items: '[]' } }), 403, 'PermissionError');
    expectError(await callMethod(t, 'POST', DELETE_ITEMS, { doctype: 'Project', items: '{"a":1}' }), 417, 'ValidationError');
    expectError(await callMethod(t, 'POST', DELETE_ITEMS, { doctype: 'Project', items: 'not json' }), 417, 'ValidationError');
    expectError(await callMethod(t, 'POST', DELETE_ITEMS, { doctype: 'Nope', items: '[]' }), 404, 'DoesNotExistError');
  });

  it('frappe-js-sdk calls it as Frappe’s desk does and reads the names that failed', async () => {
    const { t } = w;
    const keep = await make(t, 'Project', { title: 'kept' });
    await make(t, 'Project Task', { subject: 'holds', project: keep });
    const gone = await make(t, 'Project', { title: 'gone' });
    const answer = await adminSdk(server, t)
      .call()
      .post<{ message: string[] }>(DELETE_ITEMS, { doctype: 'Project', items: JSON.stringify([keep, gone]) });
    expect(answer.message).toEqual([keep]);
    const left = await names(t, 'Project');
    expect(left).toContain(keep);
    expect(left).not.toContain(gone);
  });
});

describe('submit_cancel_or_update_docs', () => {
  let w: ListWorkTenant;
  beforeAll(async () => {
    w = await listWorkTenant(server, 'bulk');
  }, 60_000);

  async function project(name: string): Promise<Record<string, any>> {
    const res = await w.t.call('GET', `/api/resource/Project/${name}`);
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  it('update sets a field on every named document through the save path and answers []', async () => {
    const { t } = w;
    const list = [await make(t, 'Project', { title: 'one' }), await make(t, 'Project', { title: 'two' }), await make(t, 'Project', { title: 'three' })];
    const res = await callMethod(t, 'POST', BULK, { doctype: 'Project', docnames: list, action: 'update', data: { status: 'Done' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toEqual([]);
    for (const name of list) expect((await project(name)).status).toBe('Done');
  });

  it('reports those that fail (an invalid value; a submitted document outside allow-on-submit; a cancelled one) and saves the others', async () => {
    const { t } = w;
    const draft = await make(t, 'Expense', { title: 'draft' });
    const submitted = await make(t, 'Expense', { title: 'submitted', docstatus: 1 });
    const cancelled = await make(t, 'Expense', { title: 'to cancel', docstatus: 1 });
    expect((await t.call('PUT', `/api/resource/Expense/${cancelled}`, { json: { docstatus: 2 } })).status).toBe(200);
    const res = await callMethod(t, 'POST', BULK, {
      doctype: 'Expense',
      docnames: [draft, submitted, cancelled],
      action: 'update',
      data: { title: 'renamed' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toEqual([submitted, cancelled]);
    expect(serverMessages(res.body).length).toBeGreaterThanOrEqual(2);
    expect((await t.call('GET', `/api/resource/Expense/${draft}`)).body.data.title).toBe('renamed');
    expect((await t.call('GET', `/api/resource/Expense/${submitted}`)).body.data.title).toBe('submitted');

    const bad = await make(t, 'Project', { title: 'bad value' });
    const good = await make(t, 'Project', { title: 'good value' });
    const invalid = await callMethod(t, 'POST', BULK, {
      doctype: 'Project',
      docnames: [bad, 'no-such-project'],
      action: 'update',
      data: { status: 'Nonsense' },
    });
    expect(invalid.body.message).toEqual([bad, 'no-such-project']);
    expect((await project(bad)).status).toBe('Open');
    expect((await project(good)).status).toBe('Open');
  });

  it('submit and cancel act on drafts and submitted documents only', async () => {
    const { t } = w;
    const a = await make(t, 'Expense', { title: 'a' });
    const b = await make(t, 'Expense', { title: 'b', docstatus: 1 });
    const submit = await callMethod(t, 'POST', BULK, { doctype: 'Expense', docnames: [a, b], action: 'submit' });
    expect(submit.body.message).toEqual([b]);
    expect((await t.call('GET', `/api/resource/Expense/${a}`)).body.data.docstatus).toBe(1);
    const cancel = await callMethod(t, 'POST', BULK, { doctype: 'Expense', docnames: [a, b], action: 'cancel' });
    expect(cancel.body.message).toEqual([]);
    expect((await t.call('GET', `/api/resource/Expense/${b}`)).body.data.docstatus).toBe(2);
  });

  it('respects permlevels and ownership: a level-1 field keeps its value, another user’s document fails', async () => {
    const { t, owner } = w;
    const mine = await make(t, 'Project', { title: 'mine' }, owner.auth);
    expect((await t.call('PUT', `/api/resource/Project/${mine}`, { json: { budget: 100 } })).status).toBe(200);
    const admins = await make(t, 'Project', { title: 'admin’s' });
    const res = await callMethod(
      t,
      'POST',
      BULK,
      { doctype: 'Project', docnames: [mine, admins], action: 'update', data: { note: 'edited', budget: 999 } },
      owner.auth,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toEqual([admins]);
    const saved = await project(mine);
    expect(saved.note).toBe('edited');
    expect(saved.budget).toBe(100);
    expect((await project(admins)).note).toBeUndefined(); // unset (the REST answer leaves nulls out)
  });

  it('refuses a caller without the right, standard fields in data, and a bad action', async () => {
    const { t, viewer } = w;
    const p = await make(t, 'Project', { title: 'untouched' });
    expectError(
      await callMethod(t, 'POST', BULK, { doctype: 'Project', docnames: [p], action: 'update', data: { note: 'x' } }, viewer.auth),
      403,
      'PermissionError',
    );
    expectError(await callMethod(t, 'POST', BULK, { doctype: 'Project', docnames: [p], action: 'update', data: { docstatus: 1 } }), 417, 'ValidationError');
    expectError(await callMethod(t, 'POST', BULK, { doctype: 'Project', docnames: [p], action: 'delete' }), 417, 'ValidationError');
    expectError(await callMethod(t, 'POST', BULK, { doctype: 'Project', docnames: [p], action: 'update' }), 417, 'ValidationError');
    expect((await project(p)).note).toBeUndefined();
  });
});

/** Parses a CSV the way the export writes it (quoted cells with "" for a quote, CRLF rows). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return rows;
}

describe('export_query', () => {
  let w: ListWorkTenant;
  let p1: string;
  let p2: string;
  let ownersProject: string;
  beforeAll(async () => {
    w = await listWorkTenant(server, 'exp');
    p1 = await make(w.t, 'Project', { title: 'Alpha', status: 'Open', budget: 1500, note: '<p>a <b>bold</b> note</p>' });
    p2 = await make(w.t, 'Project', { title: '=HYPERLINK("http://evil.test","click")', status: 'Done', budget: 3, note: '-2+3' });
    ownersProject = await make(w.t, 'Project', { title: 'Owner’s own', note: '@SUM(A1)' }, w.owner.auth);
  }, 60_000);

  const fields = JSON.stringify(['`tabProject`.`name`', '`tabProject`.`title`', 'status', '`tabProject`.`budget`', 'note']);

  it('answers a CSV download: Sr and the labels, a row per document, formulas neutralised, HTML as text', async () => {
    const { t } = w;
    const res = await t.call('POST', `/api/method/${EXPORT}`, {
      form: { doctype: 'Project', file_format_type: 'CSV', title: 'My Projects', fields, order_by: '`tabProject`.`title` asc' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="My Projects\.csv"/);
    expect(res.text.startsWith('"Sr","ID","Title","Status","Budget","Note"\r\n')).toBe(true);
    const rows = parseCsv(res.text);
    expect(rows[0]).toEqual(['Sr', 'ID', 'Title', 'Status', 'Budget', 'Note']);
    expect(rows.slice(1)).toEqual([
      ['1', p2, `'=HYPERLINK("http://evil.test","click")`, 'Done', '3.0', "'-2+3"],
      ['2', p1, 'Alpha', 'Open', '1500.0', 'a bold note'],
      ['3', ownersProject, 'Owner’s own', 'Open', '0.0', "'@SUM(A1)"],
    ]);
    // numbers are written unquoted (QUOTE_NONNUMERIC), text quoted
    expect(res.text).toContain(`\r\n1,"${p2}",`);
  });

  it('selected_items exports only the selection; page_length limits the rows', async () => {
    const { t } = w;
    const res = await t.call('GET', `/api/method/${EXPORT}`, {
      query: { doctype: 'Project', file_format_type: 'CSV', fields, selected_items: JSON.stringify([p1]) },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/filename="Project\.csv"/);
    expect(parseCsv(res.text).map((r) => r[1])).toEqual(['ID', p1]);
    const two = await t.call('GET', `/api/method/${EXPORT}`, { query: { doctype: 'Project', fields, page_length: 2 } });
    expect(parseCsv(two.text)).toHaveLength(3);
  });

  it('csv_delimiter and csv_quoting as Frappe pops them: `;` with minimal quoting', async () => {
    const { t } = w;
    const res = await t.call('GET', `/api/method/${EXPORT}`, {
      query: { doctype: 'Project', fields: JSON.stringify(['title', 'budget']), selected_items: JSON.stringify([p2]), csv_delimiter: ';', csv_quoting: 0 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe(`Sr;Title;Budget\r\n1;"'=HYPERLINK(""http://evil.test"",""click"")";3.0\r\n`);
  });

  it('a caller who reads only their own documents, and not level 1, exports only those rows and not the budget', async () => {
    const { t, owner } = w;
    const res = await t.call('POST', `/api/method/${EXPORT}`, { form: { doctype: 'Project', file_format_type: 'CSV', fields }, auth: owner.auth });
    expect(res.status, res.text).toBe(200);
    expect(parseCsv(res.text)).toEqual([
      ['Sr', 'ID', 'Title', 'Status', 'Note'],
      ['1', ownersProject, 'Owner’s own', 'Open', "'@SUM(A1)"],
    ]);
  });

  it('403 without the export right; 417 for Excel and for a field that is not the DocType’s', async () => {
    const { t, viewer } = w;
    const refused = await t.call('POST', `/api/method/${EXPORT}`, { form: { doctype: 'Project', file_format_type: 'CSV', fields }, auth: viewer.auth });
    expectError(refused, 403, 'PermissionError');
    expect(serverMessages(refused.body)).toEqual(['You are not allowed to export Project doctype']);
    expectError(await t.call('POST', `/api/method/${EXPORT}`, { form: { doctype: 'Project', file_format_type: 'Excel', fields } }), 417, 'ValidationError');
    expectError(
      await t.call('POST', `/api/method/${EXPORT}`, { form: { doctype: 'Project', file_format_type: 'CSV', fields: JSON.stringify(['`tabUser`.`name`']) } }),
      417,
      'DataError',
    );
    expectError(await t.call('POST', `/api/method/${EXPORT}`, { form: { doctype: 'Project', fields: JSON.stringify(['nope']) } }), 417, 'DataError');
  });
});

describe('user_settings', () => {
  let w: ListWorkTenant;
  beforeAll(async () => {
    w = await listWorkTenant(server, 'us');
  }, 60_000);
  const GET = 'frappe.model.utils.user_settings.get';
  const SAVE = 'frappe.model.utils.user_settings.save';

  it('save merges into what is stored (top level) and get answers the JSON text, per user', async () => {
    const { t, owner } = w;
    expect((await t.call('GET', `/api/method/${GET}`, { query: { doctype: 'Project' } })).body.message).toBe('{}');
    const first = await callMethod(t, 'POST', SAVE, { doctype: 'Project', user_settings: { List: { order_by: 'modified desc', page_length: 20 } } });
    expect(first.status, first.text).toBe(200);
    expect(first.body.message).toEqual({ List: { order_by: 'modified desc', page_length: 20 } });
    const second = await callMethod(t, 'POST', SAVE, { doctype: 'Project', user_settings: { last_view: 'List', List: { page_length: 100 } } });
    expect(second.body.message).toEqual({ List: { page_length: 100 }, last_view: 'List' });
    const got = await t.call('GET', `/api/method/${GET}`, { query: { doctype: 'Project' } });
    expect(typeof got.body.message).toBe('string');
    expect(JSON.parse(got.body.message)).toEqual({ List: { page_length: 100 }, last_view: 'List' });

    // another user has their own (none yet), and theirs do not touch the Administrator's
    expect((await t.call('GET', `/api/method/${GET}`, { query: { doctype: 'Project' }, auth: owner.auth })).body.message).toBe('{}');
    await callMethod(t, 'POST', SAVE, { doctype: 'Project', user_settings: JSON.stringify({ last_view: 'Report' }) }, owner.auth);
    expect(JSON.parse((await t.call('GET', `/api/method/${GET}`, { query: { doctype: 'Project' }, auth: owner.auth })).body.message)).toEqual({
      last_view: 'Report',
    });
    expect(JSON.parse((await t.call('GET', `/api/method/${GET}`, { query: { doctype: 'Project' } })).body.message).last_view).toBe('List');
    // per DocType
    expect((await t.call('GET', `/api/method/${GET}`, { query: { doctype: 'Expense' } })).body.message).toBe('{}');
  });

  it('refuses settings over 64 KB, a non-object, an unknown DocType and Guest', async () => {
    const { t } = w;
    expectError(await callMethod(t, 'POST', SAVE, { doctype: 'Project', user_settings: { big: 'x'.repeat(70 * 1024) } }), 417, 'ValidationError');
    expectError(await callMethod(t, 'POST', SAVE, { doctype: 'Project', user_settings: '[1,2]' }), 417, 'ValidationError');
    expectError(await callMethod(t, 'POST', SAVE, { doctype: 'No Such', user_settings: '{}' }), 404, 'DoesNotExistError');
    expectError(await t.call('GET', `/api/method/${GET}`, { query: { doctype: 'Project' }, auth: null }), 403, 'PermissionError');
  });

  it('frappe-js-sdk saves and reads them', async () => {
    const { t } = w;
    const sdk = adminSdk(server, t);
    await sdk.call().post(SAVE, { doctype: 'Project Task', user_settings: JSON.stringify({ List: { fields: ['subject'] } }) });
    const got = await sdk.call().get<{ message: string }>(GET, { doctype: 'Project Task' });
    expect(JSON.parse(got.message)).toEqual({ List: { fields: ['subject'] } });
  });
});

describe('get_group_by_count', () => {
  let w: ListWorkTenant;
  let open1: string;
  let open2: string;
  let done: string;
  let ownerOpen: string;
  beforeAll(async () => {
    w = await listWorkTenant(server, 'gbc');
    const { t, owner } = w;
    open1 = await make(t, 'Project', { title: 'o1', status: 'Open' });
    open2 = await make(t, 'Project', { title: 'o2', status: 'Open' });
    done = await make(t, 'Project', { title: 'd', status: 'Done' });
    ownerOpen = await make(t, 'Project', { title: 'mine', status: 'Open' }, owner.auth);
    const todo = (reference_name: string, allocated_to: string, status = 'Open') =>
      make(t, 'ToDo', { description: `about ${reference_name}`, reference_type: 'Project', reference_name, allocated_to, status });
    await todo(open1, 'Administrator');
    await todo(open2, 'Administrator');
    await todo(done, 'Administrator');
    await todo(open1, owner.email);
    await todo(ownerOpen, owner.email);
    await todo(open2, owner.email, 'Cancelled');
  }, 60_000);

  const counts = (res: { body: any }) => res.body.message as Array<{ name: string; count: number; title?: string }>;

  it('assigned_to: not-cancelled ToDos per user on the documents matching the filters', async () => {
    const { t, owner } = w;
    const all = await callMethod(t, 'GET', GROUP_BY, { doctype: 'Project', current_filters: '[]', field: 'assigned_to' });
    expect(all.status, all.text).toBe(200);
    expect(counts(all)).toEqual([
      { name: 'Administrator', count: 3 },
      { name: owner.email, count: 2 },
    ]);
    const open = await t.call('GET', `/api/method/${GROUP_BY}`, {
      query: { doctype: 'Project', current_filters: JSON.stringify([['Project', 'status', '=', 'Done']]), field: 'assigned_to' },
    });
    expect(counts(open)).toEqual([{ name: 'Administrator', count: 1 }]);
  });

  it('owner: documents per creator, the caller’s own first; a Select field: per value', async () => {
    const { t, owner } = w;
    const asOwner = await callMethod(t, 'POST', GROUP_BY, { doctype: 'Project', current_filters: '{}', field: 'owner' }, owner.auth);
    // the owner reads only their own Projects
    expect(counts(asOwner)).toEqual([{ name: owner.email, count: 1 }]);
    const asAdmin = await callMethod(t, 'POST', GROUP_BY, { doctype: 'Project', current_filters: '{}', field: 'owner' });
    expect(counts(asAdmin)).toEqual([
      { name: 'Administrator', count: 3 },
      { name: owner.email, count: 1 },
    ]);
    const status = await callMethod(t, 'POST', GROUP_BY, { doctype: 'Project', current_filters: JSON.stringify({ title: ['!=', 'o2'] }), field: 'status' });
    expect(counts(status)).toEqual([
      { name: 'Open', count: 2 },
      { name: 'Done', count: 1 },
    ]);
  });

  it('a Link to a DocType that shows titles in links: each count has the linked document’s title', async () => {
    const { t } = w;
    const label = {
      name: 'Label',
      autoname: 'hash',
      title_field: 'label_name',
      show_title_field_in_link: 1,
      fields: [{ fieldname: 'label_name', label: 'Label Name', fieldtype: 'Data' }],
    };
    const tagged = { name: 'Tagged', autoname: 'hash', fields: [{ fieldname: 'label', label: 'Label', fieldtype: 'Link', options: 'Label' }] };
    for (const def of [label, tagged]) expect((await postDoctype(t, { module: 'Custom', permissions: [ALL_RIGHTS], ...def })).status).toBe(200);
    const red = await make(t, 'Label', { label_name: 'Red' });
    const blue = await make(t, 'Label', { label_name: 'Blue' });
    for (const l of [red, red, blue]) await make(t, 'Tagged', { label: l });
    const res = await callMethod(t, 'GET', GROUP_BY, { doctype: 'Tagged', current_filters: '[]', field: 'label' });
    expect(counts(res)).toEqual([
      { name: red, count: 2, title: 'Red' },
      { name: blue, count: 1, title: 'Blue' },
    ]);
  });

  it('counts only what the caller may read: their own documents, and not a level they cannot read', async () => {
    const { t, owner, viewer } = w;
    const assigned = await callMethod(t, 'GET', GROUP_BY, { doctype: 'Project', current_filters: '[]', field: 'assigned_to' }, owner.auth);
    expect(counts(assigned)).toEqual([{ name: owner.email, count: 1 }]);
    expectError(await callMethod(t, 'GET', GROUP_BY, { doctype: 'Project', current_filters: '[]', field: 'budget' }, owner.auth), 417, 'DataError');
    expectError(await callMethod(t, 'GET', GROUP_BY, { doctype: 'Project', current_filters: '[]', field: 'nope' }), 417, 'DataError');
    expectError(await callMethod(t, 'GET', GROUP_BY, { doctype: 'Expense', current_filters: '[]', field: 'owner' }, viewer.auth), 403, 'PermissionError');
  });
});
