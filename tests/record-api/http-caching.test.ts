import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer, type TestTenant } from '../support/server';
import { createUser } from '../platform/helpers';

/**
 * HTTP validators on documents: a read carries an ETag derived from the document's version;
 * `If-None-Match` answers 304; `If-Match` on an update or delete answers 412 when the document
 * changed since (beside Frappe's own `modified` check, which stays).
 */

let server: TestServer;
let t: TestTenant;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('etag');
});
afterAll(() => server.close());

async function newTodo(description = 'cache me'): Promise<{ name: string; etag: string }> {
  const res = await t.call('POST', '/api/resource/ToDo', { json: { description } });
  const etag = res.headers.get('etag');
  expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  return { name: res.body.data.name as string, etag: etag! };
}

describe('ETag and If-None-Match', () => {
  it('a read carries the version’s ETag; If-None-Match with it answers 304 without a body, with another 200', async () => {
    const { name, etag } = await newTodo();
    const read = await t.call('GET', `/api/resource/ToDo/${name}`);
    expect(read.headers.get('etag')).toBe(etag); // the create's answer named the same version
    expect(read.headers.get('cache-control')).toBe('private, no-cache');

    const fresh = await t.call('GET', `/api/resource/ToDo/${name}`, { headers: { 'If-None-Match': etag } });
    expect(fresh.status).toBe(304);
    expect(fresh.text).toBe('');
    expect(fresh.headers.get('etag')).toBe(etag);
    // A list of tags, one of them current, and a weak form of it, match too (weak comparison).
    expect((await t.call('GET', `/api/resource/ToDo/${name}`, { headers: { 'If-None-Match': `"old", W/${etag}` } })).status).toBe(304);
    expect((await t.call('GET', `/api/v2/document/ToDo/${name}`, { headers: { 'If-None-Match': etag } })).status).toBe(304);

    const updated = await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { description: 'changed' } });
    const next = updated.headers.get('etag');
    expect(next).not.toBe(etag);
    const stale = await t.call('GET', `/api/resource/ToDo/${name}`, { headers: { 'If-None-Match': etag } });
    expect(stale.status).toBe(200);
    expect(stale.body.data.description).toBe('changed');
    expect(stale.headers.get('etag')).toBe(next);
  });

  it('two callers who may see different fields get different tags for one version', async () => {
    const u = await server.tenant('etag');
    expect((await u.call('POST', '/api/resource/Role', { json: { role_name: 'Clerk' } })).status).toBe(200);
    const created = await u.call('POST', '/api/resource/DocType', {
      json: {
        name: 'Salary Slip',
        module: 'Custom',
        fields: [
          { fieldname: 'employee', fieldtype: 'Data' },
          { fieldname: 'amount', fieldtype: 'Currency', permlevel: 1 },
        ],
        permissions: [
          { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
          { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
          { role: 'Clerk', read: 1 },
        ],
      },
    });
    expect(created.status, created.text).toBe(200);
    const clerk = await createUser(server, u, 'clerk@example.com', ['Clerk']);
    const slip = await u.call('POST', '/api/resource/Salary Slip', { json: { employee: 'Ada', amount: 100 } });
    const name = slip.body.data.name as string;
    const asAdmin = await u.call('GET', `/api/resource/Salary Slip/${name}`);
    const asClerk = await call(server.url, u.name, 'GET', `/api/resource/Salary Slip/${name}`, { auth: clerk.auth });
    expect(asClerk.body.data.amount).toBeUndefined();
    expect(asClerk.headers.get('etag')).not.toBe(asAdmin.headers.get('etag'));
    // The admin's tag names the admin's view: the clerk is sent the whole (smaller) answer.
    const crossed = await call(server.url, u.name, 'GET', `/api/resource/Salary Slip/${name}`, {
      auth: clerk.auth,
      headers: { 'If-None-Match': asAdmin.headers.get('etag')! },
    });
    expect(crossed.status).toBe(200);
  });
});

describe('If-Match', () => {
  it('an update naming the current version succeeds; naming an older one is 412 and changes nothing', async () => {
    const { name, etag } = await newTodo();
    const first = await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { description: 'first' }, headers: { 'If-Match': etag } });
    expect(first.status, first.text).toBe(200);
    const current = first.headers.get('etag')!;

    const lost = await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { description: 'lost update' }, headers: { 'If-Match': etag } });
    expect(lost.status).toBe(412);
    expect(lost.body.exc_type).toBe('PreconditionFailed');
    expect((await t.call('GET', `/api/resource/ToDo/${name}`)).body.data.description).toBe('first');

    // v2's PATCH, a list with the current tag, and `*` all pass; a weak tag never matches (strong comparison).
    expect(
      (await t.call('PATCH', `/api/v2/document/ToDo/${name}`, { json: { description: 'second' }, headers: { 'If-Match': `"x", ${current}` } })).status,
    ).toBe(200);
    const weak = await t.call('PATCH', `/api/v2/document/ToDo/${name}`, {
      json: { description: 'third' },
      headers: { 'If-Match': `W/${(await t.call('GET', `/api/resource/ToDo/${name}`)).headers.get('etag')!}` },
    });
    expect(weak.status).toBe(412);
    expect(weak.body.errors[0].type).toBe('PreconditionFailed');
    expect((await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { description: 'any' }, headers: { 'If-Match': '*' } })).status).toBe(200);

    // Frappe's own check stays: a stale `modified` in the body is still a TimestampMismatchError.
    const stale = await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { description: 'x', modified: '2001-01-01 00:00:00.000000' } });
    expect([stale.status, stale.body.exc_type]).toEqual([417, 'TimestampMismatchError']);
  });

  it('a delete naming an older version is 412 and keeps the document; the current one deletes it', async () => {
    const { name, etag } = await newTodo();
    const updated = await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { description: 'moved on' } });
    const refused = await t.call('DELETE', `/api/resource/ToDo/${name}`, { headers: { 'If-Match': etag } });
    expect([refused.status, refused.body.exc_type]).toEqual([412, 'PreconditionFailed']);
    expect((await t.call('GET', `/api/resource/ToDo/${name}`)).status).toBe(200);
    const deleted = await t.call('DELETE', `/api/v2/document/ToDo/${name}`, { headers: { 'If-Match': updated.headers.get('etag')! } });
    expect(deleted.status).toBe(202);
    expect((await t.call('GET', `/api/resource/ToDo/${name}`)).status).toBe(404);
    // `*` on a document that no longer exists: 404, not 412.
    expect((await t.call('DELETE', `/api/resource/ToDo/${name}`, { headers: { 'If-Match': '*' } })).status).toBe(404);
  });
});
