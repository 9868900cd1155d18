import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';
import { call, startTestServer, type CallResult, type TestServer, type TestTenant } from '../support/server';
import { createUser } from '../platform/helpers';

/**
 * Frappe's API v2 (frappe-wire.md §1.4, §3.3, the checks of frappe/tests/test_api_v2.py): every
 * route, with v2's `{"data": …}` bodies and `{"errors": [...]}` errors.
 */

const LAB_APP = path.join(ROOT, 'tests/fixtures/apps/lab_app');
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startTestServer({ apps: [LAB_APP] });
  t = await server.tenant('v2');
});
afterAll(() => server.close());

/** A v2 error: the status, one entry of that type, and no v1 keys. */
function expectV2Error(res: CallResult, status: number, type: string): Record<string, any> {
  expect(res.status, res.text).toBe(status);
  expect(res.body).not.toHaveProperty('exc_type');
  expect(res.body).not.toHaveProperty('_server_messages');
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors[0].type).toBe(type);
  return res.body.errors[0];
}

const todo = (description: string, extra: Record<string, unknown> = {}) => t.call('POST', '/api/v2/document/ToDo', { json: { description, ...extra } });

describe('/api/v2/document', () => {
  it('creates from the body itself (no data wrapper), reads, lists with limit and start, and counts', async () => {
    const u = await server.tenant('v2');
    const created: string[] = [];
    for (const d of ['one', 'two', 'three']) {
      const res = await u.call('POST', '/api/v2/document/ToDo', { json: { description: d, priority: 'High', doctype: 'ignored' } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ description: d, priority: 'High', doctype: 'ToDo' });
      created.push(res.body.data.name as string);
    }
    const read = await u.call('GET', `/api/v2/document/ToDo/${created[0]}`);
    expect(read.body).toEqual({ data: expect.objectContaining({ name: created[0], description: 'one' }) });

    const all = await u.call('GET', '/api/v2/document/ToDo', { query: { fields: '["name","description"]', order_by: 'creation asc' } });
    expect(all.body.data.map((r: { description: string }) => r.description)).toEqual(['one', 'two', 'three']);
    // limit is the page length (v1's limit_page_length is not read); start the offset.
    const page = await u.call('GET', '/api/v2/document/ToDo', {
      query: { fields: '["description"]', order_by: 'creation asc', limit: 1, start: 1, limit_page_length: 100 },
    });
    expect(page.body).toEqual({ data: [{ description: 'two' }] });
    const arrays = await u.call('GET', '/api/v2/document/ToDo', { query: { fields: '["description"]', order_by: 'creation asc', as_dict: 'false', limit: 2 } });
    expect(arrays.body.data).toEqual([['one'], ['two']]);

    const count = await u.call('GET', '/api/v2/doctype/ToDo/count');
    expect(count.body).toEqual({ data: 3 });
    const filtered = await u.call('GET', '/api/v2/doctype/ToDo/count', { query: { filters: '[["description","like","t%"]]' } });
    expect(filtered.body).toEqual({ data: 2 });
  });

  it('a field named `data` is a field of the document, not a wrapper', async () => {
    const u = await server.tenant('v2');
    const made = await u.call('POST', '/api/v2/document/DocType', {
      json: { name: 'Note Pad', module: 'Custom', fields: [{ fieldname: 'data', fieldtype: 'Small Text', label: 'Data' }] },
    });
    expect(made.status, made.text).toBe(200);
    const res = await u.call('POST', '/api/v2/document/Note Pad', { json: { data: 'kept as a field' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.data).toBe('kept as a field');
  });

  it('updates with PATCH and PUT (a merge, as in v1), deletes with 202 {"data": "ok"}, then answers 404 in v2’s error body', async () => {
    const name = (await todo('before')).body.data.name as string;
    const patched = await t.call('PATCH', `/api/v2/document/ToDo/${name}`, { json: { description: 'patched' } });
    expect(patched.body.data).toMatchObject({ name, description: 'patched', status: 'Open' });
    const put = await t.call('PUT', `/api/v2/document/ToDo/${name}`, { json: { status: 'Closed' } });
    expect(put.body.data).toMatchObject({ description: 'patched', status: 'Closed' });
    expect((await t.call('GET', `/api/v2/document/ToDo/${name}`)).body.data.status).toBe('Closed');

    const deleted = await t.call('DELETE', `/api/v2/document/ToDo/${name}`);
    expect([deleted.status, deleted.body]).toEqual([202, { data: 'ok' }]);
    const gone = expectV2Error(await t.call('GET', `/api/v2/document/ToDo/${name}`), 404, 'DoesNotExistError');
    expect(gone.exception).toBeUndefined();
  });

  it('a missing document is 404 DoesNotExistError without a traceback; a validation error is 417 with its message', async () => {
    const missing = expectV2Error(await t.call('DELETE', '/api/v2/document/ToDo/no-such-todo'), 404, 'DoesNotExistError');
    expect(missing.exception).toBeFalsy();
    expectV2Error(await t.call('GET', '/api/v2/document/User/NonExistent@s.com'), 404, 'DoesNotExistError');

    const refused = expectV2Error(await t.call('POST', '/api/v2/document/ToDo', { json: { priority: 'High' } }), 417, 'MandatoryError');
    expect(refused.message).toContain('Description');
    expect(refused.title).toBeTruthy();
    expect(refused.exception).toContain('MandatoryError');
    expect((await t.call('GET', '/api/v2/document/ToDo', { query: { fields: '["name"]', filters: '[["description","like","%"]]' } })).status).toBe(200);

    const bad = expectV2Error(await t.call('PATCH', '/api/v2/document/ToDo/x', { json: { priority: 'High' } }), 404, 'DoesNotExistError');
    expect(bad).toBeTruthy();
  });

  it('runs a document method: GET needs read, POST write; unknown methods are 404', async () => {
    const sample = await t.call('POST', '/api/v2/document/Lab Sample', { json: { code: 'ab', weight: 2 } });
    const name = sample.body.data.name as string;
    const described = await t.call('GET', `/api/v2/document/Lab Sample/${name}/method/describe`);
    expect(described.body).toEqual({ data: { code: 'AB', weight: 2 } });
    const doubled = await t.call('POST', `/api/v2/document/Lab Sample/${name}/method/double_weight`);
    expect(doubled.body).toEqual({ data: 4 });
    expect((await t.call('GET', `/api/v2/document/Lab Sample/${name}`)).body.data.weight).toBe(4);
    // describe is GET only.
    expectV2Error(await t.call('POST', `/api/v2/document/Lab Sample/${name}/method/describe`), 403, 'PermissionError');
    expectV2Error(await t.call('GET', `/api/v2/document/Lab Sample/${name}/method/nope`), 404, 'DoesNotExistError');

    // A user who may not read Lab Samples runs neither.
    const stranger = await createUser(server, t, 'stranger@example.com', []);
    const asStranger = (m: string, p: string) => call(server.url, t.name, m, p, { auth: stranger.auth });
    expectV2Error(await asStranger('GET', `/api/v2/document/Lab Sample/${name}/method/describe`), 403, 'PermissionError');
    expectV2Error(await asStranger('POST', `/api/v2/document/Lab Sample/${name}/method/double_weight`), 403, 'PermissionError');
  });
});

describe('/api/v2/method', () => {
  it('answers {"data": result}: ping, a dotted path, and the logged-in user', async () => {
    expect((await t.call('GET', '/api/v2/method/ping')).body).toEqual({ data: 'pong' });
    expect((await t.call('GET', '/api/v2/method/lab_app.api.hello', { query: { name: 'Ada' } })).body).toEqual({ data: 'hello Ada' });
    expect((await t.call('GET', '/api/v2/method/frappe.auth.get_logged_user')).body).toEqual({ data: 'Administrator' });
    expect((await t.call('POST', '/api/v2/method/lab_app.api.nothing')).body).toEqual({});
  });

  it('puts messages in a `messages` array, not in _server_messages', async () => {
    const res = await t.call('GET', '/api/v2/method/lab_app.api.hello_with_message');
    expect(res.body).toEqual({ data: 'hello', messages: [{ message: 'Said on the side', title: 'Note' }] });
    const v1 = await t.call('GET', '/api/method/lab_app.api.hello_with_message');
    expect(v1.body.message).toBe('hello');
    expect(typeof v1.body._server_messages).toBe('string');
  });

  it('reaches a DocType controller’s function as /method/<doctype>/<method>, the same as its dotted path', async () => {
    const u = await server.tenant('v2');
    await u.call('POST', '/api/v2/document/Lab Sample', { json: { code: 'x' } });
    const short = await u.call('GET', '/api/v2/method/Lab Sample/sample_count');
    const long = await u.call('GET', '/api/v2/method/lab_app.lab.doctype.lab_sample.lab_sample.sample_count');
    expect(short.body).toEqual({ data: 1 });
    expect(short.text).toBe(long.text);
    expectV2Error(await u.call('GET', '/api/v2/method/ToDo/no_such_function'), 417, 'ValidationError');
  });

  it('refuses what is not whitelisted (403) and unknown paths (417), in v2’s error body', async () => {
    expectV2Error(await t.call('GET', '/api/v2/method/lab_app.api.not_whitelisted'), 403, 'PermissionError');
    expectV2Error(await t.call('GET', '/api/v2/method/lab_app.api.missing'), 417, 'ValidationError');
    expectV2Error(await t.call('GET', '/api/v2/method/lab_app.api.post_only'), 403, 'PermissionError');
  });

  it('run_doc_method works on the document as sent: the result in data, the changed document in docs; a stale one is refused', async () => {
    const sample = (await t.call('POST', '/api/v2/document/Lab Sample', { json: { code: 'rd', weight: 3 } })).body.data;
    const document = JSON.stringify({ ...sample, weight: 5 });
    const res = await t.call('GET', '/api/v2/method/run_doc_method', {
      query: { method: 'preview_weight', document, kwargs: '{"factor": 3, "unknown": "what"}' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toBe(15);
    expect(res.body.docs).toHaveLength(1);
    expect(res.body.docs[0]).toMatchObject({ name: sample.name, weight: 15, doctype: 'Lab Sample' });
    // Nothing was saved.
    expect((await t.call('GET', `/api/v2/document/Lab Sample/${sample.name}`)).body.data.weight).toBe(3);
    // POST with a JSON body works the same.
    const posted = await t.call('POST', '/api/v2/method/run_doc_method', { json: { method: 'preview_weight', document: { ...sample } } });
    expect(posted.body.data).toBe(6);

    const stale = { ...sample, modified: '2001-01-01 00:00:00.000000' };
    expectV2Error(
      await t.call('GET', '/api/v2/method/run_doc_method', { query: { method: 'preview_weight', document: JSON.stringify(stale) } }),
      417,
      'TimestampMismatchError',
    );
    expectV2Error(await t.call('GET', '/api/v2/method/run_doc_method', { query: { method: 'no_method', document } }), 404, 'DoesNotExistError');
  });
});

describe('/api/v2/doctype', () => {
  it('meta answers the DocType as Frappe’s meta dict; a Guest is refused', async () => {
    const res = await t.call('GET', '/api/v2/doctype/ToDo/meta');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'ToDo', doctype: 'DocType' });
    expect(res.body.data.fields.map((f: { fieldname: string }) => f.fieldname)).toContain('description');
    expectV2Error(await call(server.url, t.name, 'GET', '/api/v2/doctype/ToDo/meta'), 403, 'PermissionError');
    expectV2Error(await t.call('GET', '/api/v2/doctype/No Such Thing/meta'), 404, 'DoesNotExistError');
  });

  it('count needs read permission', async () => {
    const u = await server.tenant('v2');
    expect(
      (
        await u.call('POST', '/api/v2/document/DocType', {
          json: { name: 'Secret Note', module: 'Custom', fields: [{ fieldname: 'body', fieldtype: 'Text' }] },
        })
      ).status,
    ).toBe(200);
    const nobody = await createUser(server, u, 'nobody@example.com', []);
    expectV2Error(await call(server.url, u.name, 'GET', '/api/v2/doctype/Secret Note/count', { auth: nobody.auth }), 403, 'PermissionError');
    expect((await u.call('GET', '/api/v2/doctype/Secret Note/count')).body).toEqual({ data: 0 });
  });
});

describe('v2 errors before routing', () => {
  it('a bad token, an unknown site and an unknown v2 path answer in v2’s body', async () => {
    expectV2Error(await call(server.url, t.name, 'GET', '/api/v2/document/ToDo', { auth: 'token nope:nope' }), 401, 'AuthenticationError');
    expectV2Error(await call(server.url, 'no-such-site', 'GET', '/api/v2/document/ToDo'), 404, 'DoesNotExistError');
    expectV2Error(await t.call('GET', '/api/v2/rest'), 404, 'DoesNotExistError');
    // v1 keeps its own body.
    expect((await call(server.url, t.name, 'GET', '/api/resource/ToDo', { auth: 'token nope:nope' })).body.exc_type).toBe('AuthenticationError');
  });
});
