import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAG, tenantWithDoctypes, WIDGET } from '../support/doctypes';
import { startTestServer, type CallResult, type TestServer, type TestTenant } from '../support/server';
import { expectError, fetchDoc, insert, listNames } from './helpers';

/**
 * Creates and updates with a plain JSON body are read by the API's front door (dispatch.ts) without
 * express' parsers; every other body still goes through them. Both must answer alike.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const widgets = () => tenantWithDoctypes(server, WIDGET, TAG);

/** A raw request body (bytes, any headers) to a tenant, as the Administrator. */
async function send(t: TestTenant, method: string, path: string, body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string>): Promise<CallResult> {
  const res = await fetch(new URL(path, server.url), {
    method,
    headers: { 'X-Frappe-Site-Name': t.name, Authorization: t.auth, Accept: 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as unknown, headers: res.headers };
}

describe('JSON bodies of creates and updates', () => {
  it('malformed JSON answers 417 and writes nothing, on POST and on PUT', async () => {
    const t = await widgets();
    const created = await send(t, 'POST', '/api/resource/Widget', '{"title": "half', { 'Content-Type': 'application/json' });
    expectError(created, 417, 'ValidationError');
    expect(await listNames(t, 'Widget')).toEqual([]);
    const doc = await insert(t, 'Widget', { title: 'before' });
    const updated = await send(t, 'PUT', `/api/resource/Widget/${doc.name}`, '{"title": ', { 'Content-Type': 'application/json' });
    expectError(updated, 417, 'ValidationError');
    expect((await fetchDoc(t, 'Widget', doc.name)).title).toBe('before');
  });

  it('a byte-order mark, a charset parameter and an upper-case media type are accepted', async () => {
    const t = await widgets();
    const bom = await send(t, 'POST', '/api/resource/Widget', '\uFEFF{"title": "bom"}', { 'Content-Type': 'application/json' });
    expect(bom.status, bom.text).toBe(200);
    const charset = await send(t, 'POST', '/api/resource/Widget', '{"title": "utf8"}', { 'Content-Type': 'Application/JSON; charset=UTF-8' });
    expect(charset.status, charset.text).toBe(200);
    expect((await listNames(t, 'Widget')).length).toBe(2);
  });

  it('a gzip-encoded body is inflated (through the express parsers) and stored', async () => {
    const t = await widgets();
    const res = await send(t, 'POST', '/api/resource/Widget', new Uint8Array(gzipSync('{"title": "zipped"}')), {
      'Content-Type': 'application/json',
      'Content-Encoding': 'gzip',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.title).toBe('zipped');
  });

  it('a JSON array or scalar as the document answers 417', async () => {
    const t = await widgets();
    for (const body of ['[{"title": "a"}]', '"a title"', '42']) {
      const res = await send(t, 'POST', '/api/resource/Widget', body, { 'Content-Type': 'application/json' });
      expect(res.status, body).toBe(417);
    }
    expect(await listNames(t, 'Widget')).toEqual([]);
  });

  it('the same document sent as a form (data=…) and as JSON is stored the same', async () => {
    const t = await widgets();
    const form = await send(t, 'POST', '/api/resource/Widget', new URLSearchParams({ data: JSON.stringify({ title: 'form', qty: 3 }) }).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    const json = await send(t, 'POST', '/api/resource/Widget', JSON.stringify({ title: 'json', qty: 3 }), { 'Content-Type': 'application/json' });
    expect([form.status, json.status]).toEqual([200, 200]);
    expect(form.body.data.qty).toBe(json.body.data.qty);
  });

  it('a declared length over the limit answers 413 before the body is read', async () => {
    const t = await widgets();
    const res = await send(t, 'POST', '/api/resource/Widget', JSON.stringify({ title: 'x'.repeat(3 * 1024 * 1024) }), { 'Content-Type': 'application/json' });
    expect(res.status).toBe(413);
    expect(res.body.exc_type).toBe('RequestEntityTooLarge');
  });
});
