import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRole, createUser } from '../platform/helpers';
import { expectError, fetchDoc, insert, serverMessages, tableCount } from '../record-api/helpers';
import { createDoctype } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { book, genre, legacyPost, libraryTenant, method } from './helpers';

/**
 * frappe.client.rename_doc (frappe/model/rename_doc.py): the document takes the new name and
 * everything that names it follows, in one transaction.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const library = () => libraryTenant(() => server.tenant('r'));

function rename(t: TestTenant, doctype: string, oldName: string, newName: unknown, extra: Record<string, unknown> = {}, auth?: string | null) {
  // what frappe-js-sdk's db.renameDoc sends
  return method(t, 'POST', 'frappe.client.rename_doc', {
    json: { doctype, old_name: oldName, new_name: newName, merge: false, ...extra },
    ...(auth !== undefined ? { auth } : {}),
  });
}

async function rowsWhere(t: TestTenant, table: string, column: string, value: string): Promise<number> {
  const { rows } = await server.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${t.schema}"."${table}" WHERE "${column}" = $1`, [value]);
  return Number(rows[0]!.n);
}

describe('frappe.client.rename_doc', () => {
  it('renames and rewrites every Link, child-row Link, Single Link and Dynamic Link to it', async () => {
    const t = await library();
    const fantasy = await genre(t, 'Fantasy');
    await genre(t, 'Drama');
    const linked = await book(t, {
      title: 'Earthsea',
      genre: fantasy,
      tags: [
        { tag: 'wizard', genre: fantasy },
        { tag: 'other', genre: 'Drama' },
      ],
    });
    const unrelated = await book(t, { title: 'Hamlet', genre: 'Drama' });
    await t.call('PUT', '/api/resource/Library Settings/Library Settings', { json: { default_genre: fantasy } });
    const noteOnGenre = await insert(t, 'Library Note', { ref_type: 'Genre', ref_name: fantasy, content: 'about the genre' });
    // a Dynamic Link naming another DocType's document with the same text must not change
    const fantasyBook = await book(t, { title: 'Fantasy' });
    await t.call('POST', '/api/method/frappe.client.rename_doc', { json: { doctype: 'Book', old_name: fantasyBook.name, new_name: 'Fantasy', merge: false } });
    const noteOnBook = await insert(t, 'Library Note', { ref_type: 'Book', ref_name: 'Fantasy', content: 'about the book' });

    const res = await rename(t, 'Genre', 'Fantasy', 'High Fantasy');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ message: 'High Fantasy' });

    expectError(await t.call('GET', '/api/resource/Genre/Fantasy'), 404, 'DoesNotExistError');
    const renamed = await fetchDoc(t, 'Genre', 'High Fantasy');
    expect(renamed.genre_name).toBe('High Fantasy'); // the field: autoname field follows the name
    const b = await fetchDoc(t, 'Book', linked.name);
    expect(b.genre).toBe('High Fantasy');
    expect(b.tags.map((r: any) => r.genre)).toEqual(['High Fantasy', 'Drama']);
    expect(b.modified).toBe(linked.modified); // links are rewritten without touching modified, as Frappe does
    expect((await fetchDoc(t, 'Book', unrelated.name)).genre).toBe('Drama');
    expect((await fetchDoc(t, 'Library Settings', 'Library Settings')).default_genre).toBe('High Fantasy');
    expect((await fetchDoc(t, 'Library Note', noteOnGenre.name)).ref_name).toBe('High Fantasy');
    expect((await fetchDoc(t, 'Library Note', noteOnBook.name)).ref_name).toBe('Fantasy');
  });

  it('child rows follow their renamed parent; links from other DocTypes follow too', async () => {
    const t = await library();
    const b = await book(t, { title: 'Dune', tags: [{ tag: 'a' }, { tag: 'b' }] });
    const loan = await insert(t, 'Loan', { book: b.name, borrower: 'ann' });
    const res = await legacyPost(t, 'frappe.client.rename_doc', { doctype: 'Book', old_name: b.name, new_name: 'dune-1965' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ message: 'dune-1965' });
    const moved = await fetchDoc(t, 'Book', 'dune-1965');
    expect(moved.tags.map((r: any) => [r.name, r.tag, r.parent])).toEqual([
      [b.tags[0].name, 'a', 'dune-1965'],
      [b.tags[1].name, 'b', 'dune-1965'],
    ]);
    expect(await rowsWhere(t, 'tabBook Tag', 'parent', b.name)).toBe(0);
    expect((await fetchDoc(t, 'Loan', loan.name)).book).toBe('dune-1965');
    // the link is valid: the Loan still saves
    expect((await t.call('PUT', `/api/resource/Loan/${loan.name}`, { json: { borrower: 'bob' } })).status).toBe(200);
  });

  it('amended_from follows a renamed original', async () => {
    const t = await library();
    const original = await insert(t, 'Loan', { borrower: 'ann', docstatus: 1 });
    expect((await t.call('PUT', `/api/resource/Loan/${original.name}`, { json: { docstatus: 2 } })).status).toBe(200);
    const amendment = await insert(t, 'Loan', { borrower: 'ann', amended_from: original.name });
    expect(amendment.name).toBe(`${original.name}-1`);
    const res = await rename(t, 'Loan', original.name, 'LOAN-A');
    expect(res.status, res.text).toBe(200);
    expect((await fetchDoc(t, 'Loan', amendment.name)).amended_from).toBe('LOAN-A');
  });

  it('stored passwords follow the document', async () => {
    const t = await library();
    await createDoctype(t, { name: 'Vault', autoname: 'prompt', fields: [{ fieldname: 'secret', fieldtype: 'Password' }] });
    expect((await t.call('POST', '/api/resource/Vault', { json: { name: 'v1', secret: 'hunter2' } })).status).toBe(200);
    expect(await rowsWhere(t, '__Auth', 'name', 'v1')).toBe(1);
    expect((await rename(t, 'Vault', 'v1', 'v2')).status).toBe(200);
    expect(await rowsWhere(t, '__Auth', 'name', 'v1')).toBe(0);
    expect(await rowsWhere(t, '__Auth', 'name', 'v2')).toBe(1);
  });

  it('merge folds the document into an existing one: links move, the old one is deleted', async () => {
    const t = await library();
    await genre(t, 'Sci-Fi');
    await genre(t, 'Science Fiction');
    const b = await book(t, { title: 'Dune', genre: 'Sci-Fi' });
    const missing = await rename(t, 'Genre', 'Sci-Fi', 'Space Opera', { merge: true });
    expectError(missing, 417, 'ValidationError');
    expect(serverMessages(missing.body)).toEqual(['Genre Space Opera does not exist, select a new target to merge']);
    const res = await legacyPost(t, 'frappe.client.rename_doc', { doctype: 'Genre', old_name: 'Sci-Fi', new_name: 'Science Fiction', merge: '1' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ message: 'Science Fiction' });
    expect((await fetchDoc(t, 'Book', b.name)).genre).toBe('Science Fiction');
    expectError(await t.call('GET', '/api/resource/Genre/Sci-Fi'), 404, 'DoesNotExistError');
    expect(await tableCount(server, t, 'Genre')).toBe(1);
  });

  it('refuses a taken name, a missing document, the same name and an invalid name', async () => {
    const t = await library();
    await genre(t, 'Poetry');
    await genre(t, 'Drama');
    const taken = await rename(t, 'Genre', 'Poetry', 'Drama');
    expectError(taken, 417, 'ValidationError');
    expect(serverMessages(taken.body)).toEqual(['Another Genre with name Drama exists, select another name']);
    const gone = await rename(t, 'Genre', 'Epic', 'Saga');
    expectError(gone, 417, 'ValidationError');
    expect(serverMessages(gone.body)).toEqual(["Can't rename Epic to Saga because Epic doesn't exist."]);
    const same = await rename(t, 'Genre', 'Poetry', 'Poetry');
    expectError(same, 417, 'ValidationError');
    expect(serverMessages(same.body)).toEqual(['No changes made because old and new name are the same.']);
    expectError(await rename(t, 'Genre', 'Poetry', '<b>Poetry</b>'), 409, 'NameError');
    expectError(await rename(t, 'Genre', 'Poetry', 'New Genre 1'), 409, 'NameError');
    expectError(await rename(t, 'Genre', 'Poetry', 'Genre'), 409, 'NameError');
    expectError(await rename(t, 'Genre', 'Poetry', 42), 409, 'NameError');
    expectError(await rename(t, 'Genre', 'Poetry', '   '), 417, 'ValidationError');
    expectError(await rename(t, 'Genre', 'Poetry', 'x'.repeat(141)), 409, 'NameError');
    expectError(await method(t, 'POST', 'frappe.client.rename_doc', { json: { doctype: 'Genre', old_name: 'Poetry' } }), 417, 'ValidationError');
    // nothing changed
    expect((await fetchDoc(t, 'Genre', 'Poetry')).genre_name).toBe('Poetry');
    // surrounding spaces are trimmed, as validate_name does
    const trimmed = await rename(t, 'Genre', 'Poetry', '  Verse  ');
    expect(trimmed.body).toEqual({ message: 'Verse' });
  });

  it('refuses DocTypes without allow_rename, autoincrement DocTypes, Singles, child rows and DocType records', async () => {
    const t = await library();
    await createDoctype(t, { name: 'Ledger Entry', autoname: 'prompt', allow_rename: 0, fields: [{ fieldname: 'amount', fieldtype: 'Int' }] });
    await t.call('POST', '/api/resource/Ledger Entry', { json: { name: 'L1' } });
    const locked = await rename(t, 'Ledger Entry', 'L1', 'L2');
    expectError(locked, 417, 'ValidationError');
    expect(serverMessages(locked.body)).toEqual(['Ledger Entry not allowed to be renamed']);
    await createDoctype(t, { name: 'Counter', autoname: 'autoincrement', fields: [{ fieldname: 'n', fieldtype: 'Int' }] });
    const counter = await insert(t, 'Counter', { n: 1 });
    expectError(await rename(t, 'Counter', String(counter.name), '99'), 417, 'ValidationError');
    expectError(await rename(t, 'Library Settings', 'Library Settings', 'Other'), 417, 'ValidationError');
    const b = await book(t, { title: 'Dune', tags: [{ tag: 'a' }] });
    expectError(await rename(t, 'Book Tag', b.tags[0].name, 'row-1'), 417, 'ValidationError');
    expectError(await rename(t, 'DocType', 'Book', 'Novel'), 417, 'ValidationError');
    // users and roles are named in credential caches and permission rules, not only in Link fields
    expectError(await rename(t, 'User', 'Administrator', 'root@example.com'), 417, 'ValidationError');
    expectError(await rename(t, 'Role', 'System Manager', 'Admins'), 417, 'ValidationError');
    expect((await t.call('GET', '/api/resource/Book')).status).toBe(200);
  });

  it('needs write permission on the document (Frappe: 417 "You need write permission … to rename")', async () => {
    const t = await library();
    await createRole(t, 'Clerk');
    await createDoctype(t, {
      name: 'Shelf',
      autoname: 'prompt',
      fields: [{ fieldname: 'room', fieldtype: 'Data' }],
      permissions: [
        { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
        { role: 'Clerk', read: 1, write: 0, create: 0, delete: 0 },
      ],
    });
    await t.call('POST', '/api/resource/Shelf', { json: { name: 'S1' } });
    const clerk = await createUser(server, t, 'clerk@example.com', ['Clerk']);
    const res = await rename(t, 'Shelf', 'S1', 'S2', {}, clerk.auth);
    expectError(res, 417, 'ValidationError');
    expect(serverMessages(res.body)).toEqual(['You need write permission on Shelf S1 to rename']);
    expectError(await rename(t, 'Shelf', 'S1', 'S2', {}, null), 403, 'PermissionError'); // Guest
    expect((await fetchDoc(t, 'Shelf', 'S1')).name).toBe('S1');
  });

  it('is one transaction: a refused step leaves every link as it was', async () => {
    const t = await library();
    // merging a submitted document moves its links, then fails to delete it: the moved links roll back
    await createDoctype(t, {
      name: 'Edition',
      autoname: 'prompt',
      is_submittable: 1,
      fields: [{ fieldname: 'year', fieldtype: 'Int' }],
    });
    await createDoctype(t, { name: 'Copy', fields: [{ fieldname: 'edition', fieldtype: 'Link', options: 'Edition' }] });
    await insert(t, 'Edition', { name: 'E1', year: 1, docstatus: 1 });
    await insert(t, 'Edition', { name: 'E2', year: 2 });
    const copy = await insert(t, 'Copy', { edition: 'E1' });
    const res = await rename(t, 'Edition', 'E1', 'E2', { merge: true });
    expectError(res, 417, 'ValidationError'); // a submitted document cannot be deleted
    expect((await fetchDoc(t, 'Copy', copy.name)).edition).toBe('E1');
    expect((await fetchDoc(t, 'Edition', 'E1')).name).toBe('E1');
  });
});
