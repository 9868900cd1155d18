import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';
import { call, startTestServer, type TestServer, type TestTenant } from '../support/server';

/** /api/method/<dotted.path> (frappe-wire.md §1.3): whitelisting, verbs, Guest, arguments, answers. */

const LAB_APP = path.join(ROOT, 'tests/fixtures/apps/lab_app');
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startTestServer({ apps: [LAB_APP] });
  t = await server.tenant('rpc');
});
afterAll(() => server.close());

describe('finding and calling methods', () => {
  it('answers {"message": result} for a whitelisted function at its dotted path', async () => {
    const res = await t.call('GET', '/api/method/lab_app.api.hello', { query: { name: 'Ada' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'hello Ada' });
  });

  it('answers {} when the function returns nothing', async () => {
    expect((await t.call('POST', '/api/method/lab_app.api.nothing')).body).toEqual({});
  });

  it('refuses an exported function that is not whitelisted with 403', async () => {
    const res = await t.call('GET', '/api/method/lab_app.api.not_whitelisted');
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
    expect(JSON.parse(JSON.parse(res.body._server_messages)[0]).message).toContain('lab_app.api.not_whitelisted</strong> is not whitelisted');
  });

  it('answers an unknown path with 417, as Frappe does', async () => {
    const res = await t.call('GET', '/api/method/lab_app.api.missing');
    expect(res.status).toBe(417);
    expect(res.body.exc_type).toBe('ValidationError');
    expect((await t.call('GET', '/api/method/no_such_app.module.fn')).status).toBe(417);
  });

  it('refuses Guest on a method that does not allow guests, with 403', async () => {
    const res = await t.call('GET', '/api/method/lab_app.api.hello', { auth: null });
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
    expect((await t.call('GET', '/api/method/lab_app.api.guest_hello', { auth: null })).body).toEqual({ message: 'hello guest' });
  });

  it('refuses a verb the method does not allow with 403 Not permitted; PATCH is never a default verb', async () => {
    const get = await t.call('GET', '/api/method/lab_app.api.post_only');
    expect(get.status).toBe(403);
    expect(JSON.parse(JSON.parse(get.body._server_messages)[0]).message).toBe('Not permitted');
    expect((await t.call('POST', '/api/method/lab_app.api.post_only')).body).toEqual({ message: 'posted' });
    expect((await t.call('PATCH', '/api/method/lab_app.api.hello')).status).toBe(403);
  });

  it('ignores anything after the first slash of the method path', async () => {
    expect((await t.call('GET', '/api/method/ping/ignored/part')).body).toEqual({ message: 'pong' });
    expect((await t.call('GET', '/api/method/ping/')).body).toEqual({ message: 'pong' });
  });

  it('serves the built-in ping, frappe.ping, version and get_logged_user', async () => {
    expect((await t.call('GET', '/api/method/ping', { auth: null })).body).toEqual({ message: 'pong' });
    expect((await t.call('GET', '/api/method/frappe.ping', { auth: null })).body).toEqual({ message: 'pong' });
    expect((await t.call('GET', '/api/method/version')).body.message).toMatch(/^\d+\.\d+\.\d+$/);
    expect((await t.call('GET', '/api/method/frappe.auth.get_logged_user')).body).toEqual({ message: 'Administrator' });
    expect((await t.call('GET', '/api/method/frappe.auth.get_logged_user', { auth: null })).status).toBe(403);
  });

  it('shows the traceback of an unexpected failure only in developer mode, whatever NODE_ENV says', async () => {
    // The suite's server runs with NODE_ENV=test and no developer mode: no stack, no message.
    const plain = await t.call('GET', '/api/method/lab_app.api.fail');
    expect(plain.status).toBe(500);
    expect(plain.text).not.toMatch(/\n\s+at |\.ts:|unexpected failure|node_modules/);
    const dev = await startTestServer({ apps: [LAB_APP], developerMode: true });
    try {
      const d = await dev.tenant('dev');
      const res = await d.call('GET', '/api/method/lab_app.api.fail');
      expect(res.status).toBe(500);
      const [trace] = JSON.parse(res.body.exc) as string[];
      expect(trace).toContain('unexpected failure');
      expect(trace).toMatch(/\n\s+at /);
    } finally {
      await dev.close();
    }
  });

  it('answers an unexpected failure with 500 and, in production, no stack trace', async () => {
    const prod = await startTestServer({ apps: [LAB_APP], production: true });
    try {
      const p = await prod.tenant('prod');
      const res = await p.call('GET', '/api/method/lab_app.api.fail');
      expect(res.status).toBe(500);
      expect(res.text).not.toMatch(/\n\s+at |\.ts:|unexpected failure/);
      expect(JSON.parse(res.body.exc)).toHaveLength(1);
    } finally {
      await prod.close();
    }
  });
});

describe('arguments', () => {
  const echo = (o: Parameters<TestTenant['call']>[2], method = 'POST') => t.call(method, '/api/method/lab_app.api.echo', o);

  it('merges the query string with a JSON body (the body wins)', async () => {
    const res = await echo({ query: { a: 'query', b: 'query' }, json: { b: 'body', list: [1, 2] } });
    expect(res.body.message).toEqual({ a: 'query', b: 'body', list: [1, 2] });
  });

  it('reads form fields and the query string of a POST (the Python client’s post_api)', async () => {
    expect((await echo({ query: { q: '1' }, form: { f: 'x y' } })).body.message).toEqual({ q: '1', f: 'x y' });
    expect((await echo({ query: { only: 'query' }, body: '' })).body.message).toEqual({ only: 'query' });
  });

  it('reads multipart fields', async () => {
    const form = new FormData();
    form.set('part', 'value');
    const res = await fetch(`${server.url}/api/method/lab_app.api.echo`, { method: 'POST', body: form, headers: { 'X-Frappe-Site-Name': t.name } });
    expect(await res.json()).toEqual({ message: { part: 'value' } });
  });

  it('turns a JSON array body into `data`', async () => {
    expect((await echo({ json: [0, 1, 2] })).body.message).toEqual({ data: [0, 1, 2] });
  });

  it('keeps every value of an axios-style key[] parameter', async () => {
    const res = await t.call('DELETE', '/api/method/lab_app.api.echo?ids[]=a&ids[]=b');
    expect(res.body.message).toEqual({ ids: ['a', 'b'] });
  });

  it('never passes ignore_permissions, flags, cmd or sid to the method', async () => {
    const res = await echo({ json: { ignore_permissions: 1, flags: { x: 1 }, cmd: 'x', sid: 'y', kept: 1 } });
    expect(res.body.message).toEqual({ kept: 1 });
  });

  it('refuses a JSON scalar body and malformed JSON with 417', async () => {
    expect((await echo({ body: '42', headers: { 'Content-Type': 'application/json' } })).status).toBe(417);
    expect((await echo({ body: '{"a":', headers: { 'Content-Type': 'application/json' } })).status).toBe(417);
  });
});

describe('legacy cmd RPC on /', () => {
  it('POST / with a form cmd runs the method', async () => {
    const res = await call(server.url, t.name, 'POST', '/', { auth: t.auth, form: { cmd: 'lab_app.api.hello', name: 'form' } });
    expect(res.body).toEqual({ message: 'hello form' });
  });

  it('GET /?cmd= runs the method', async () => {
    const res = await call(server.url, t.name, 'GET', '/', { auth: t.auth, query: { cmd: 'frappe.auth.get_logged_user' } });
    expect(res.body).toEqual({ message: 'Administrator' });
  });

  it('POST / with a JSON cmd runs the method (frappe-js-sdk’s forgetPassword)', async () => {
    const res = await call(server.url, t.name, 'POST', '/', { auth: t.auth, json: { cmd: 'lab_app.api.hello', name: 'json' } });
    expect(res.body).toEqual({ message: 'hello json' });
  });

  it('/ without cmd runs no method: it is the desk, which sends a signed-in caller to /app', async () => {
    const res = await fetch(new URL('/', server.url), { headers: { 'X-Frappe-Site-Name': t.name, Authorization: t.auth }, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/app');
  });
});

describe('document methods (run_method)', () => {
  it('runs a GET document method with read permission and answers {"data": result}', async () => {
    const created = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'a1', weight: 2.5 } });
    const res = await t.call('GET', `/api/resource/Lab Sample/${created.body.data.name}`, { query: { run_method: 'describe' } });
    expect(res.body).toEqual({ data: { code: 'A1', weight: 2.5 } });
  });

  it('runs a POST document method that changes the document', async () => {
    const created = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'a2', weight: 3 } });
    const res = await t.call('POST', `/api/resource/Lab Sample/${created.body.data.name}`, { json: { run_method: 'double_weight' } });
    expect(res.body).toEqual({ data: 6 });
    expect((await t.call('GET', `/api/resource/Lab Sample/${created.body.data.name}`)).body.data.weight).toBe(6);
  });

  it('submits and cancels through the built-in document methods', async () => {
    const created = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'a3' } });
    const path = `/api/resource/Lab Sample/${created.body.data.name}`;
    expect((await t.call('POST', path, { json: { run_method: 'submit' } })).status).toBe(200);
    expect((await t.call('GET', path)).body.data.docstatus).toBe(1);
    expect((await t.call('POST', path, { form: { run_method: 'cancel' } })).status).toBe(200);
    expect((await t.call('GET', path)).body.data.docstatus).toBe(2);
  });

  it('refuses an unknown method (404), a wrong verb (403) and Guest (403)', async () => {
    const created = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'a4' } });
    const path = `/api/resource/Lab Sample/${created.body.data.name}`;
    expect((await t.call('POST', path, { json: { run_method: 'nope' } })).status).toBe(404);
    expect((await t.call('GET', path, { query: { run_method: 'double_weight' } })).status).toBe(403);
    expect((await t.call('GET', path, { query: { run_method: 'describe' }, auth: null })).status).toBe(403);
  });
});
