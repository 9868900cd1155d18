import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOK, LEDGER_ENTRY, tenantWithDoctypes } from '../support/doctypes';
import { startTestServer, type TestServer } from '../support/server';
import { DATETIME_RE, DEFAULT_FIELDS, expectError, fetchDoc, HASH_RE, insert, listNames, serverMessages } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A tenant with `Book` (hash naming): title (reqd), notes, pages, published. */
const bookTenant = () => tenantWithDoctypes(server, BOOK);

/** A tenant with `Ledger Entry` (prompt naming, a space in the DocType name). */
const promptTenant = () => tenantWithDoctypes(server, LEDGER_ENTRY);

describe('create', () => {
  it('a POST answers 200 with exactly {"data": doc} carrying every default field', async () => {
    const t = await bookTenant();
    const res = await t.call('POST', '/api/resource/Book', { json: { title: 'Dune' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(['data']);
    const doc = res.body.data;
    for (const key of DEFAULT_FIELDS) expect(doc).toHaveProperty(key);
    expect(doc.name).toMatch(HASH_RE);
    expect(doc.doctype).toBe('Book');
    expect(doc.owner).toBe('Administrator');
    expect(doc.modified_by).toBe('Administrator');
    expect(doc.docstatus).toBe(0);
    expect(doc.idx).toBe(0);
    expect(doc.creation).toMatch(DATETIME_RE);
    expect(doc.modified).toBe(doc.creation);
    expect(doc.title).toBe('Dune');
  });

  it('a created document omits null fields and carries numeric defaults', async () => {
    const t = await bookTenant();
    const doc = await insert(t, 'Book', { title: 'Dune' });
    expect(doc).not.toHaveProperty('notes');
    expect(doc).not.toHaveProperty('published');
    expect(doc.pages).toBe(0);
    expect(Object.values(doc)).not.toContain(null);
  });

  it('owner, creation, modified and modified_by sent by the client are overwritten', async () => {
    const t = await bookTenant();
    const doc = await insert(t, 'Book', {
      title: 'Dune',
      owner: 'someone@example.com',
      creation: '2001-01-01 00:00:00',
      modified: '2001-01-01 00:00:00',
      modified_by: 'someone@example.com',
    });
    expect(doc.owner).toBe('Administrator');
    expect(doc.modified_by).toBe('Administrator');
    expect(doc.creation.startsWith('2001')).toBe(false);
    expect(doc.modified.startsWith('2001')).toBe(false);
  });

  it('unknown keys in the body are ignored, as Frappe ignores them', async () => {
    const t = await bookTenant();
    const doc = await insert(t, 'Book', { title: 'Dune', no_such_field: 'x' });
    expect(doc).not.toHaveProperty('no_such_field');
    expect((await fetchDoc(t, 'Book', doc.name)).title).toBe('Dune');
  });
});

describe('read', () => {
  it('a GET returns the document exactly as the create answered it', async () => {
    const t = await bookTenant();
    const created = await insert(t, 'Book', { title: 'Dune', notes: 'sand', pages: 412, published: '1965-08-01' });
    const res = await t.call('GET', `/api/resource/Book/${created.name}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.body.data).toEqual(created);
  });

  it('a GET of a missing document answers 404 DoesNotExistError "<DocType> <name> not found"', async () => {
    const t = await bookTenant();
    const res = await t.call('GET', '/api/resource/Book/nosuchbook');
    expectError(res, 404, 'DoesNotExistError');
    expect(serverMessages(res.body)).toEqual(['Book nosuchbook not found']);
  });

  it('a list answers 200 {"data": [...]} with the created names', async () => {
    const t = await bookTenant();
    const a = await insert(t, 'Book', { title: 'A' });
    const b = await insert(t, 'Book', { title: 'B' });
    const res = await t.call('GET', '/api/resource/Book');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect((res.body.data as Array<{ name: string }>).map((r) => r.name).sort()).toEqual([a.name, b.name].sort());
  });
});

describe('update', () => {
  it('a PUT is a merge: only the keys sent change', async () => {
    const t = await bookTenant();
    const created = await insert(t, 'Book', { title: 'Dune', notes: 'sand', pages: 412 });
    const res = await t.call('PUT', `/api/resource/Book/${created.name}`, { json: { pages: 500 } });
    expect(res.status).toBe(200);
    const updated = res.body.data;
    expect(updated.pages).toBe(500);
    expect(updated.title).toBe('Dune');
    expect(updated.notes).toBe('sand');
    expect(updated.creation).toBe(created.creation);
    expect(updated.owner).toBe('Administrator');
    expect(updated.modified).toMatch(DATETIME_RE);
    expect(updated.modified > created.modified).toBe(true);
    expect(await fetchDoc(t, 'Book', created.name)).toEqual(updated);
  });

  it('a PUT setting a field to null clears it, and the field disappears from the document', async () => {
    const t = await bookTenant();
    const created = await insert(t, 'Book', { title: 'Dune', notes: 'sand' });
    const res = await t.call('PUT', `/api/resource/Book/${created.name}`, { json: { notes: null } });
    expect(res.status).toBe(200);
    expect(res.body.data).not.toHaveProperty('notes');
    expect(await fetchDoc(t, 'Book', created.name)).not.toHaveProperty('notes');
  });

  it('a PUT to a missing document answers 404 DoesNotExistError and creates nothing', async () => {
    const t = await bookTenant();
    const res = await t.call('PUT', '/api/resource/Book/nosuchbook', { json: { title: 'X' } });
    expectError(res, 404, 'DoesNotExistError');
    expect(await listNames(t, 'Book')).toEqual([]);
  });
});

describe('delete', () => {
  it('a DELETE answers 202 with exactly {"data":"ok"} and a later GET answers 404 DoesNotExistError', async () => {
    const t = await bookTenant();
    const created = await insert(t, 'Book', { title: 'Dune' });
    const res = await t.call('DELETE', `/api/resource/Book/${created.name}`);
    expect(res.status).toBe(202);
    expect(res.text).toBe('{"data":"ok"}');
    expectError(await t.call('GET', `/api/resource/Book/${created.name}`), 404, 'DoesNotExistError');
    expect(await listNames(t, 'Book')).toEqual([]);
  });

  it('a DELETE of a missing document answers 404 DoesNotExistError', async () => {
    const t = await bookTenant();
    expectError(await t.call('DELETE', '/api/resource/Book/nosuchbook'), 404, 'DoesNotExistError');
  });
});

describe('/api/v1', () => {
  it('create, get, update, list and delete all work under /api/v1/resource', async () => {
    const t = await bookTenant();
    const created = await t.call('POST', '/api/v1/resource/Book', { json: { title: 'Dune' } });
    expect(created.status).toBe(200);
    const name = created.body.data.name as string;
    expect(name).toMatch(HASH_RE);

    const got = await t.call('GET', `/api/v1/resource/Book/${name}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(created.body.data);

    const put = await t.call('PUT', `/api/v1/resource/Book/${name}`, { json: { pages: 7 } });
    expect(put.status).toBe(200);
    expect(put.body.data.pages).toBe(7);
    expect(put.body.data.title).toBe('Dune');

    const list = await t.call('GET', '/api/v1/resource/Book', { query: { fields: '["name","pages"]' } });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([{ name, pages: 7 }]);

    const del = await t.call('DELETE', `/api/v1/resource/Book/${name}`);
    expect(del.status).toBe(202);
    expect(del.text).toBe('{"data":"ok"}');
    expectError(await t.call('GET', `/api/v1/resource/Book/${name}`), 404, 'DoesNotExistError');
  });
});

describe('paths', () => {
  it('trailing slashes are optional on list and create', async () => {
    const t = await bookTenant();
    const created = await t.call('POST', '/api/resource/Book/', { json: { title: 'Dune' } });
    expect(created.status).toBe(200);
    expect(created.body.data.title).toBe('Dune');
    const list = await t.call('GET', '/api/resource/Book/');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([{ name: created.body.data.name }]);
  });

  it('trailing slashes are optional on get, update and delete of a document', async () => {
    const t = await bookTenant();
    const created = await insert(t, 'Book', { title: 'Dune' });
    const got = await t.call('GET', `/api/resource/Book/${created.name}/`);
    expect(got.status).toBe(200);
    expect(got.body.data.name).toBe(created.name);
    const put = await t.call('PUT', `/api/resource/Book/${created.name}/`, { json: { pages: 3 } });
    expect(put.status).toBe(200);
    expect(put.body.data.name).toBe(created.name);
    expect(put.body.data.pages).toBe(3);
    const del = await t.call('DELETE', `/api/resource/Book/${created.name}/`);
    expect(del.status).toBe(202);
    expect(await listNames(t, 'Book')).toEqual([]);
  });

  it('a DocType name with spaces is reached as %20', async () => {
    const t = await promptTenant();
    const created = await t.call('POST', '/api/resource/Ledger%20Entry', { json: { name: 'E1', memo: 'm' } });
    expect(created.status).toBe(200);
    expect(created.body.data.doctype).toBe('Ledger Entry');
    const got = await t.call('GET', '/api/resource/Ledger%20Entry/E1');
    expect(got.status).toBe(200);
    expect(got.body.data.memo).toBe('m');
  });

  it('a name containing "/" and spaces works when sent as %2F and %20', async () => {
    const t = await promptTenant();
    const name = 'ACC/0001 north wing';
    const created = await t.call('POST', '/api/resource/Ledger%20Entry', { json: { name, memo: 'first' } });
    expect(created.status).toBe(200);
    expect(created.body.data.name).toBe(name);
    const encoded = '/api/resource/Ledger%20Entry/ACC%2F0001%20north%20wing';

    const got = await t.call('GET', encoded);
    expect(got.status).toBe(200);
    expect(got.body.data.name).toBe(name);

    const put = await t.call('PUT', encoded, { json: { memo: 'second' } });
    expect(put.status).toBe(200);
    expect(put.body.data.memo).toBe('second');

    const del = await t.call('DELETE', encoded);
    expect(del.status).toBe(202);
    expectError(await t.call('GET', encoded), 404, 'DoesNotExistError');
  });

  it('a name containing "/" is also matched when the slash is sent unencoded (<path:name>)', async () => {
    const t = await promptTenant();
    await insert(t, 'Ledger Entry', { name: 'ACC/0002', memo: 'x' });
    const got = await t.call('GET', '/api/resource/Ledger%20Entry/ACC/0002');
    expect(got.status).toBe(200);
    expect(got.body.data.name).toBe('ACC/0002');
  });

  it('"+" in a DocType path segment is not a space: Ledger+Entry answers 404 DoesNotExistError', async () => {
    const t = await promptTenant();
    await insert(t, 'Ledger Entry', { name: 'E1' });
    expectError(await t.call('GET', '/api/resource/Ledger+Entry'), 404, 'DoesNotExistError');
    expectError(await t.call('GET', '/api/resource/Ledger+Entry/E1'), 404, 'DoesNotExistError');
  });

  it('"+" in a name is a literal plus, not a space', async () => {
    const t = await promptTenant();
    await insert(t, 'Ledger Entry', { name: 'a b', memo: 'space' });
    await insert(t, 'Ledger Entry', { name: 'a+b', memo: 'plus' });
    const plus = await t.call('GET', '/api/resource/Ledger%20Entry/a+b');
    expect(plus.status).toBe(200);
    expect(plus.body.data.name).toBe('a+b');
    expect(plus.body.data.memo).toBe('plus');
    const encodedPlus = await t.call('GET', '/api/resource/Ledger%20Entry/a%2Bb');
    expect(encodedPlus.body.data.memo).toBe('plus');
    const space = await t.call('GET', '/api/resource/Ledger%20Entry/a%20b');
    expect(space.body.data.memo).toBe('space');
  });

  it('a name of only "+" signs does not find a document named with spaces', async () => {
    const t = await promptTenant();
    await insert(t, 'Ledger Entry', { name: 'x y' });
    expectError(await t.call('GET', '/api/resource/Ledger%20Entry/x+y'), 404, 'DoesNotExistError');
  });
});
