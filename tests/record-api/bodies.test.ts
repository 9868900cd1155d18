import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTE, tenantWithDoctypes } from '../support/doctypes';
import { startTestServer, type TestServer } from '../support/server';
import { expectError, fetchDoc, insert, listNames, stable } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A tenant with `Note` (hash naming): title (Data), body (Small Text), pages (Int), pinned (Check). */
const noteTenant = () => tenantWithDoctypes(server, NOTE);

describe('accepted encodings', () => {
  it('a JSON body (application/json) creates the document', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { json: { title: 'json', pages: 2, pinned: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'json', pages: 2, pinned: 1 });
  });

  it("a form body with data=<json> creates the document (the Python client's way)", async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { form: { data: JSON.stringify({ title: 'form data', pages: 3 }) } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'form data', pages: 3 });
    expect((await fetchDoc(t, 'Note', res.body.data.name)).title).toBe('form data');
  });

  it('a form body with data=<json> updates the document', async () => {
    const t = await noteTenant();
    const doc = await insert(t, 'Note', { title: 'before', pages: 1 });
    const res = await t.call('PUT', `/api/resource/Note/${doc.name}`, { form: { data: JSON.stringify({ title: 'after' }) } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'after', pages: 1 });
  });

  it('plain form fields create the document, numbers coerced from text', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { form: { title: 'plain', pages: '4', pinned: '1' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'plain', pages: 4, pinned: 1 });
  });

  it('plain form fields update the document as a merge', async () => {
    const t = await noteTenant();
    const doc = await insert(t, 'Note', { title: 'before', body: 'kept' });
    const res = await t.call('PUT', `/api/resource/Note/${doc.name}`, { form: { title: 'after' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'after', body: 'kept' });
  });

  it('a JSON text sent as text/plain creates the document', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', {
      body: JSON.stringify({ title: 'text plain', pages: 5 }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ title: 'text plain', pages: 5 });
  });

  it('a JSON text sent as text/plain updates the document', async () => {
    const t = await noteTenant();
    const doc = await insert(t, 'Note', { title: 'before' });
    const res = await t.call('PUT', `/api/resource/Note/${doc.name}`, {
      body: JSON.stringify({ title: 'after' }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.title).toBe('after');
  });

  it('a POST without a body creates a document with defaults', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ doctype: 'Note', pages: 0, pinned: 0, docstatus: 0 });
    expect(await listNames(t, 'Note')).toEqual([res.body.data.name]);
  });

  it('a "doctype" key in the body is dropped, not an error', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { json: { doctype: 'ToDo', title: 't' } });
    expect(res.status).toBe(200);
    expect(res.body.data.doctype).toBe('Note');
    expect(res.body.data.title).toBe('t');
  });
});

describe('malformed bodies', () => {
  it('malformed JSON in an application/json POST answers 417 ValidationError and writes nothing', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { body: '{"title": "x",', headers: { 'Content-Type': 'application/json' } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Note')).toEqual([]);
  });

  it('malformed JSON in data= answers 417 ValidationError and writes nothing', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { form: { data: '{"title": ' } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Note')).toEqual([]);
  });

  it('malformed JSON sent as text/plain answers 417 ValidationError and writes nothing', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { body: '{title: x}', headers: { 'Content-Type': 'text/plain' } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Note')).toEqual([]);
  });

  it('malformed JSON in a PUT answers 417 ValidationError and leaves the document unchanged', async () => {
    const t = await noteTenant();
    const doc = await insert(t, 'Note', { title: 'before' });
    const json = await t.call('PUT', `/api/resource/Note/${doc.name}`, { body: '{"title": "after"', headers: { 'Content-Type': 'application/json' } });
    expectError(json, 417, 'ValidationError');
    const form = await t.call('PUT', `/api/resource/Note/${doc.name}`, { form: { data: '{"title": "after"' } });
    expectError(form, 417, 'ValidationError');
    expect(await fetchDoc(t, 'Note', doc.name)).toEqual(doc);
  });

  it('a JSON array body where a document is needed answers 417 and writes nothing', async () => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { json: [{ title: 'a' }, { title: 'b' }] });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Note')).toEqual([]);
  });

  it.each([
    ['a number', '42'],
    ['a string', '"title"'],
    ['true', 'true'],
    ['null', 'null'],
  ])('a JSON scalar body (%s) answers 417 and writes nothing', async (_what, body) => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { body, headers: { 'Content-Type': 'application/json' } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Note')).toEqual([]);
  });

  it.each([
    ['an array', '[{"title":"a"}]'],
    ['a number', '7'],
    ['a string', '"x"'],
    ['null', 'null'],
  ])('data= holding %s instead of an object answers 417 and writes nothing', async (_what, data) => {
    const t = await noteTenant();
    const res = await t.call('POST', '/api/resource/Note', { form: { data } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Note')).toEqual([]);
  });

  it('a JSON array body on a PUT answers 417 and leaves the document unchanged', async () => {
    const t = await noteTenant();
    const doc = await insert(t, 'Note', { title: 'before' });
    const res = await t.call('PUT', `/api/resource/Note/${doc.name}`, { json: [{ title: 'after' }] });
    expectError(res, 417, 'ValidationError');
    expect(stable(await fetchDoc(t, 'Note', doc.name))).toEqual(stable(doc));
  });
});
