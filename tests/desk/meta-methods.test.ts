import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * The two methods the desk draws its screens from: frappe.desk.desktop.get_readable_doctypes (home)
 * and frappe.desk.form.load.getdoctype (lists and forms), as a user with one role sees them.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A user whose only role is Clerk, and their `token key:secret`. */
async function clerk(t: TestTenant): Promise<string> {
  expect((await t.call('POST', '/api/resource/Role', { json: { role_name: 'Clerk' } })).status).toBe(200);
  const user = await t.call('POST', '/api/resource/User', { json: { email: 'cleo@example.com', first_name: 'Cleo', roles: [{ role: 'Clerk' }] } });
  expect(user.status, user.text).toBe(200);
  const keys = await t.call('POST', '/api/method/frappe.core.doctype.user.user.generate_keys', { json: { user: 'cleo@example.com' } });
  const key = (await t.call('GET', '/api/resource/User/cleo@example.com')).body.data.api_key as string;
  return `token ${key}:${keys.body.message.api_secret as string}`;
}

async function ledger(t: TestTenant): Promise<void> {
  for (const def of [
    { name: 'Ledger Line', istable: 1, fields: [{ fieldname: 'account', fieldtype: 'Data', in_list_view: 1 }] },
    {
      name: 'Ledger',
      is_submittable: 1,
      fields: [
        { fieldname: 'title', fieldtype: 'Data' },
        { fieldname: 'auditor_note', fieldtype: 'Data', permlevel: 1 },
        { fieldname: 'lines', fieldtype: 'Table', options: 'Ledger Line' },
      ],
      permissions: [{ role: 'Clerk', read: 1, write: 1, create: 1, submit: 0, cancel: 0, amend: 0, delete: 0 }],
    },
  ]) {
    const res = await t.call('POST', '/api/resource/DocType', { json: { module: 'Custom', permissions: [], ...def } });
    expect(res.status, res.text).toBe(200);
  }
}

describe('the desk’s metadata methods', () => {
  it('get_readable_doctypes lists only what the user may read, never child tables, by module', async () => {
    const t = await server.tenant('meta');
    const auth = await clerk(t);
    await ledger(t);
    const res = await t.call('GET', '/api/method/frappe.desk.desktop.get_readable_doctypes', { auth });
    expect(res.status, res.text).toBe(200);
    expect(res.body.message).toContainEqual({ name: 'Ledger', module: 'Custom', issingle: 0, is_submittable: 1, can_create: 1, show_title_field_in_link: 0 });
    const readable = (res.body.message as Array<{ name: string }>).map((d) => d.name);
    for (const hidden of ['User', 'DocType', 'Webhook', 'Ledger Line']) expect(readable).not.toContain(hidden);

    const admin = await t.call('GET', '/api/method/frappe.desk.desktop.get_readable_doctypes');
    const names = (admin.body.message as Array<{ name: string; module: string }>).map((d) => d.name);
    expect(names).toContain('ToDo');
    expect(names).toContain('Ledger');
    expect(names).not.toContain('Ledger Line');
    expect(names).not.toContain('DocField');
    const modules = (admin.body.message as Array<{ module: string }>).map((d) => d.module);
    expect(modules).toEqual([...modules].sort((a, b) => a.localeCompare(b)));
  });

  it('getdoctype answers Frappe’s docs (the DocType, then its child tables) without fields above the user’s permlevel, with their rights', async () => {
    const t = await server.tenant('meta');
    const auth = await clerk(t);
    await ledger(t);
    const res = await t.call('GET', '/api/method/frappe.desk.form.load.getdoctype', { auth, query: { doctype: 'Ledger' } });
    expect(res.status, res.text).toBe(200);
    const [doc, child] = res.body.docs;
    expect(res.body.docs).toHaveLength(2);
    expect(doc).toMatchObject({ name: 'Ledger', doctype: 'DocType', is_submittable: 1 });
    expect(doc.fields.map((f: { fieldname: string }) => f.fieldname)).not.toContain('auditor_note');
    expect(doc.fields.map((f: { fieldname: string }) => f.fieldname)).toContain('lines');
    expect(doc.__perm.rights).toMatchObject({ read: true, write: true, create: true, submit: false, delete: false });
    expect(doc.__perm.write_levels).toEqual([0]);
    expect(child).toMatchObject({ name: 'Ledger Line', istable: 1 });
    expect(child.__perm.rights).toMatchObject({ read: true, write: true });

    const admin = await t.call('GET', '/api/method/frappe.desk.form.load.getdoctype', { query: { doctype: 'Ledger' } });
    expect(admin.body.docs[0].fields.map((f: { fieldname: string }) => f.fieldname)).toContain('auditor_note');
  });

  it('getdoctype refuses a DocType the user may not read (403) and an unknown one (404)', async () => {
    const t = await server.tenant('meta');
    const auth = await clerk(t);
    const refused = await t.call('GET', '/api/method/frappe.desk.form.load.getdoctype', { auth, query: { doctype: 'User' } });
    expect(refused.status).toBe(403);
    expect(refused.body.exc_type).toBe('PermissionError');
    const missing = await t.call('GET', '/api/method/frappe.desk.form.load.getdoctype', { query: { doctype: 'Nope' } });
    expect(missing.status).toBe(404);
    const guest = await t.call('GET', '/api/method/frappe.desk.desktop.get_readable_doctypes', { auth: null });
    expect(guest.status).toBe(403);
  });
});
