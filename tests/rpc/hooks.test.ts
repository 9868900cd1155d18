import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * Controller hooks in code (the lab_app test app): they run in Frappe's order, inside the
 * document's transaction, and a hook that throws rolls back the document and whatever hooks wrote.
 */

let server: TestServer;
let t: TestTenant;
beforeAll(async () => {
  server = await startTestServer({ apps: [path.join(ROOT, 'tests/fixtures/apps/lab_app')] });
  t = await server.tenant('hooks');
});
afterAll(() => server.close());

async function events(sample?: string): Promise<string[]> {
  const filters = sample === undefined ? [] : [['sample', '=', sample]];
  const res = await t.call('GET', '/api/resource/Lab Log', {
    query: { fields: '["event"]', filters: JSON.stringify(filters), order_by: 'name asc', limit: 0 },
  });
  return res.body.data.map((r: { event: string }) => r.event);
}

describe('document hooks', () => {
  it('run in Frappe’s order on insert, save, submit, cancel and delete', async () => {
    const created = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'h1' } });
    expect(created.status).toBe(200);
    const name = created.body.data.name as string;
    expect(await events(name)).toEqual(['validate', 'before_save', 'after_insert', 'on_update', 'on_change']);
    await t.call('PUT', `/api/resource/Lab Sample/${name}`, { json: { title: 'changed' } });
    await t.call('PUT', `/api/resource/Lab Sample/${name}`, { json: { docstatus: 1 } });
    await t.call('PUT', `/api/resource/Lab Sample/${name}`, { json: { docstatus: 2 } });
    expect((await t.call('DELETE', `/api/resource/Lab Sample/${name}`)).status).toBe(202);
    expect((await events(name)).slice(5)).toEqual([
      'validate',
      'before_save',
      'on_update',
      'on_change',
      'validate',
      'before_submit',
      'on_update',
      'on_submit',
      'on_change',
      'on_cancel',
      'on_change',
      'on_trash',
    ]);
    // before_insert ran before the document had a name
    expect(await events('')).toContain('before_insert');
  });

  it('may change the document before it is stored', async () => {
    const created = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'lower-case' } });
    expect(created.body.data.code).toBe('LOWER-CASE');
    expect((await t.call('GET', `/api/resource/Lab Sample/${created.body.data.name}`)).body.data.code).toBe('LOWER-CASE');
  });

  it('a hook that throws before the write answers in the envelope and writes nothing', async () => {
    const before = await t.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'Lab Log' } });
    const res = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'h2', title: 'refuse in validate' } });
    expect(res.status).toBe(417);
    expect(res.body.exc_type).toBe('ValidationError');
    expect(JSON.parse(JSON.parse(res.body._server_messages)[0]).message).toBe('Lab Sample refused by validate');
    const samples = await t.call('GET', '/api/resource/Lab Sample', { query: { filters: '[["code","=","H2"]]' } });
    expect(samples.body.data).toEqual([]);
    const after = await t.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'Lab Log' } });
    expect(after.body.message).toBe(before.body.message);
  });

  it('a hook that throws after the row was written rolls the row and every hook write back', async () => {
    const before = (await t.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'Lab Log' } })).body.message;
    const res = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'h3', title: 'refuse after write' } });
    expect(res.status).toBe(417);
    expect((await t.call('GET', '/api/resource/Lab Sample', { query: { filters: '[["code","=","H3"]]' } })).body.data).toEqual([]);
    expect((await t.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'Lab Log' } })).body.message).toBe(before);
  });

  it('a refused update leaves the stored document as it was', async () => {
    const created = await t.call('POST', '/api/resource/Lab Sample', { json: { code: 'h4', title: 'fine' } });
    const name = created.body.data.name as string;
    const res = await t.call('PUT', `/api/resource/Lab Sample/${name}`, { json: { title: 'refuse after write', weight: 9 } });
    expect(res.status).toBe(417);
    const stored = (await t.call('GET', `/api/resource/Lab Sample/${name}`)).body.data;
    expect(stored.title).toBe('fine');
    expect(stored.weight).toBe(0);
  });
});
