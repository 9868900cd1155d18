import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIBRARY_BOOK, postDoctype } from '../support/doctypes';
import { adminSdk, sdkFor } from '../support/frappe-js-sdk';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * The real npm frappe-js-sdk, unchanged, against a running Quire: every db method the record API
 * issue names, with token auth, on a DocType created at runtime, in two tenants at once.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** frappe-js-sdk as the tenant's Administrator. */
const sdk = (t: TestTenant) => adminSdk(server, t);

async function defineBook(t: TestTenant): Promise<void> {
  const res = await postDoctype(t, LIBRARY_BOOK);
  expect(res.status).toBe(200);
}

interface Book {
  title: string;
  author?: string;
  pages?: number;
  price?: number;
  genre?: string;
  published?: string;
}

const BOOKS: Book[] = [
  { title: 'Dune', author: 'Herbert', pages: 412, price: 9.99, genre: 'Fiction', published: '1965-08-01' },
  { title: 'Cosmos', author: 'Sagan', pages: 365, price: 15.5, genre: 'Science', published: '1980-01-01' },
  { title: 'SPQR', author: 'Beard', pages: 608, price: 20, genre: 'History', published: '2015-10-20' },
  { title: 'Foundation', author: 'Asimov', pages: 255, price: 7.25, genre: 'Fiction', published: '1951-06-01' },
  { title: 'The Selfish Gene', author: 'Dawkins', pages: 360, price: 12, genre: 'Science', published: '1976-01-01' },
];

describe('frappe-js-sdk against Quire', () => {
  let a: TestTenant;
  let b: TestTenant;
  beforeAll(async () => {
    [a, b] = await Promise.all([server.tenant('sdka'), server.tenant('sdkb')]);
    await Promise.all([defineBook(a), defineBook(b)]);
    const db = sdk(a).db();
    for (const book of BOOKS) await db.createDoc('Library Book', book);
    await sdk(b).db().createDoc('Library Book', { title: 'Only in B', pages: 1 });
  });

  it('createDoc returns the stored document with every default field', async () => {
    const doc = await sdk(a).db().createDoc('Library Book', { title: 'Extra', pages: '42' });
    expect(doc).toMatchObject({ doctype: 'Library Book', title: 'Extra', pages: 42, owner: 'Administrator', docstatus: 0, idx: 0 });
    for (const key of ['name', 'creation', 'modified', 'modified_by']) expect(doc).toHaveProperty(key);
    expect(doc.creation).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{6})?$/);
    await sdk(a).db().deleteDoc('Library Book', doc.name);
  });

  it('getDocList with fields, filters, orderBy, limit and limit_start pages in order', async () => {
    const db = sdk(a).db();
    const page1 = await db.getDocList('Library Book', {
      fields: ['title', 'pages'],
      filters: [['pages', '>', 300]],
      orderBy: { field: 'pages', order: 'desc' },
      limit: 2,
    });
    expect(page1).toEqual([
      { title: 'SPQR', pages: 608 },
      { title: 'Dune', pages: 412 },
    ]);
    const page2 = await db.getDocList('Library Book', {
      fields: ['title', 'pages'],
      filters: [['pages', '>', 300]],
      orderBy: { field: 'pages', order: 'desc' },
      limit: 2,
      limit_start: 2,
    });
    expect(page2).toEqual([
      { title: 'Cosmos', pages: 365 },
      { title: 'The Selfish Gene', pages: 360 },
    ]);
  });

  it('getDocList with orFilters and in/between/like operators', async () => {
    const db = sdk(a).db();
    const rows = await db.getDocList('Library Book', {
      fields: ['title'],
      filters: [['published', 'between', ['1950-01-01', '1979-12-31']]],
      orFilters: [
        ['genre', 'in', ['History', 'Science']],
        ['title', 'like', 'D%'],
      ],
      orderBy: { field: 'title' },
    });
    expect(rows.map((r) => r.title)).toEqual(['Dune', 'The Selfish Gene']);
  });

  it('getDocList with asDict false returns arrays in field order', async () => {
    const rows = await sdk(a)
      .db()
      .getDocList('Library Book', {
        fields: ['title', 'genre'],
        filters: [['title', '=', 'Cosmos']],
        asDict: false,
      });
    expect(rows).toEqual([['Cosmos', 'Science']]);
  });

  it('getDocList without arguments returns names, 20 at most', async () => {
    const rows = await sdk(a).db().getDocList('Library Book');
    expect(rows).toHaveLength(BOOKS.length);
    for (const row of rows) expect(Object.keys(row)).toEqual(['name']);
  });

  it('getDoc, updateDoc and getLastDoc see the same record', async () => {
    const db = sdk(a).db();
    const [first] = await db.getDocList('Library Book', { fields: ['name'], filters: [['title', '=', 'Foundation']] });
    const doc = await db.getDoc('Library Book', first!.name);
    expect(doc).toMatchObject({ title: 'Foundation', author: 'Asimov', pages: 255, price: 7.25, published: '1951-06-01' });
    const updated = await db.updateDoc<Book>('Library Book', first!.name, { pages: 256 });
    expect(updated.pages).toBe(256);
    expect(updated.author).toBe('Asimov');
    const last = await db.getLastDoc<Book>('Library Book', { filters: [['genre', '=', 'Fiction']], orderBy: { field: 'pages', order: 'asc' } });
    expect(last.title).toBe('Foundation');
  });

  it('getCount counts with and without filters, per tenant', async () => {
    expect(await sdk(a).db().getCount('Library Book')).toBe(BOOKS.length);
    expect(
      await sdk(a)
        .db()
        .getCount('Library Book', [['genre', '=', 'Science']]),
    ).toBe(2);
    expect(await sdk(b).db().getCount('Library Book')).toBe(1);
  });

  it('deleteDoc answers Frappe v15 {data: "ok"} and the record is gone', async () => {
    const db = sdk(a).db();
    const doc = await db.createDoc('Library Book', { title: 'Temporary' });
    expect(await db.deleteDoc('Library Book', doc.name)).toEqual({ data: 'ok' });
    await expect(db.getDoc('Library Book', doc.name)).rejects.toMatchObject({ httpStatus: 404, exc_type: 'DoesNotExistError' });
  });

  it("rejections carry Frappe's error fields", async () => {
    const db = sdk(a).db();
    await expect(db.createDoc('Library Book', { pages: 'many' })).rejects.toMatchObject({ httpStatus: 417, exc_type: 'ValidationError' });
    const err = (await db.createDoc('Library Book', { author: 'nobody' }).catch((e: unknown) => e)) as Record<string, unknown>;
    expect(err).toMatchObject({ httpStatus: 417, exc_type: 'MandatoryError' });
    const messages = JSON.parse(String(err._server_messages)) as string[];
    expect(JSON.parse(messages[0]!).message).toBe('Error: Value missing for Library Book: title');
  });

  it('each tenant sees only its own records', async () => {
    const inB = await sdk(b)
      .db()
      .getDocList('Library Book', { fields: ['title'] });
    expect(inB).toEqual([{ title: 'Only in B' }]);
    const [dune] = await sdk(a)
      .db()
      .getDocList('Library Book', { fields: ['name'], filters: [['title', '=', 'Dune']] });
    await expect(sdk(b).db().getDoc('Library Book', dune!.name)).rejects.toMatchObject({ httpStatus: 404 });
  });

  it('a key of one tenant is refused by another', async () => {
    const crossed = sdkFor(server.url, b.name, `${a.api_key}:${a.api_secret}`);
    await expect(crossed.db().getDocList('Library Book')).rejects.toMatchObject({ httpStatus: 401, exc_type: 'AuthenticationError' });
  });
});
