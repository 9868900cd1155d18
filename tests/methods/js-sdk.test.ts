import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminSdk } from '../support/frappe-js-sdk';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { book, genre, libraryTenant } from './helpers';

/**
 * The real npm frappe-js-sdk's wrappers of frappe.client methods (frappe-clients.md §2), unchanged,
 * against a running Quire: getValue, setValue, getSingleValue, submit, cancel, renameDoc, getCount,
 * and call.get/call.post of search_link. Each resolves with what the SDK reads: some the whole
 * body, some `message`.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** frappe-js-sdk as the tenant's Administrator. */
const sdk = (t: TestTenant) => adminSdk(server, t);

describe('frappe-js-sdk db methods backed by frappe.client', () => {
  it('getValue, setValue and getCount', async () => {
    const t = await libraryTenant(() => server.tenant('j'));
    const db = sdk(t).db();
    const dune = await book(t, { title: 'Dune', author: 'Herbert', pages: 412 });
    await book(t, { title: 'Emma', author: 'Austen' });

    // the SDK sends fieldname as given, filters as JSON, as_dict=true and debug=false; it returns the whole body
    expect(await db.getValue('Book', 'author', [['title', '=', 'Dune']] as any)).toEqual({ message: { author: 'Herbert' } });
    expect(await db.getValue('Book', ['title', 'pages'] as any, [['name', '=', dune.name]] as any)).toEqual({ message: { title: 'Dune', pages: 412 } });
    // no fieldname: the SDK sends the literal `[]`, which reads name
    expect(await db.getValue('Book', undefined, [['title', '=', 'Emma']] as any)).toEqual({ message: { name: expect.any(String) } });

    const set = await db.setValue('Book', dune.name, 'pages', 500);
    expect(set.message).toMatchObject({ name: dune.name, pages: 500, genre: null });
    const many = await db.setValue('Book', dune.name, { author: 'F. Herbert', in_print: 1 });
    expect(many.message).toMatchObject({ author: 'F. Herbert', in_print: 1 });

    expect(await db.getCount('Book')).toBe(2);
    expect(await db.getCount('Book', [['author', 'like', '%Herbert%']] as any)).toBe(1);
  });

  it('getSingleValue', async () => {
    const t = await libraryTenant(() => server.tenant('j'));
    const db = sdk(t).db();
    expect(await db.getSingleValue('Library Settings', 'max_loans')).toEqual({ message: 5 });
    expect(await db.getSingleValue('Library Settings', 'library_name')).toEqual({ message: 'City Library' });
  });

  it('submit and cancel', async () => {
    const t = await libraryTenant(() => server.tenant('j'));
    const db = sdk(t).db();
    const loan = await db.createDoc('Loan', { borrower: 'ann' });
    const full = (await sdk(t).call().get('frappe.client.get', { doctype: 'Loan', name: loan.name })).message;
    const submitted = await db.submit(full);
    expect(submitted).toMatchObject({ name: loan.name, docstatus: 1, borrower: 'ann', remark: null });
    const cancelled = await db.cancel('Loan', loan.name);
    expect(cancelled.message).toMatchObject({ name: loan.name, docstatus: 2 });
  });

  it('renameDoc', async () => {
    const t = await libraryTenant(() => server.tenant('j'));
    const db = sdk(t).db();
    await genre(t, 'Sci-Fi');
    const b = await book(t, { title: 'Dune', genre: 'Sci-Fi' });
    expect(await db.renameDoc('Genre', 'Sci-Fi', 'Science Fiction')).toEqual({ message: 'Science Fiction' });
    expect((await db.getDoc('Book', b.name)).genre).toBe('Science Fiction');
    await expect(db.renameDoc('Genre', 'Sci-Fi', 'Other')).rejects.toMatchObject({ httpStatus: 417, exc_type: 'ValidationError' });
  });

  it('call.get / call.post of frappe.desk.search.search_link', async () => {
    const t = await libraryTenant(() => server.tenant('j'));
    const app = sdk(t);
    const dune = await book(t, { title: 'Dune', author: 'Herbert' });
    const viaGet = await app.call().get('frappe.desk.search.search_link', { doctype: 'Book', txt: 'du', filters: { author: 'Herbert' } });
    expect(viaGet).toEqual({ message: [{ value: dune.name, label: 'Dune', description: 'Herbert' }] });
    const viaPost = await app.call().post('frappe.desk.search.search_link', { doctype: 'Book', txt: 'herb', page_length: 5 });
    expect(viaPost).toEqual({ message: [{ value: dune.name, label: 'Dune', description: 'Herbert' }] });
  });
});
