import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMO, tenantWithDoctypes } from '../support/doctypes';
import { startTestServer, type TestServer } from '../support/server';
import { expectError, fetchDoc, insert, serverMessages } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const memoTenant = () => tenantWithDoctypes(server, MEMO);

describe('optimistic locking via modified', () => {
  it('a PUT carrying the exact modified previously returned succeeds and answers a new modified', async () => {
    const t = await memoTenant();
    const doc = await insert(t, 'Memo', { subject: 'one' });
    const res = await t.call('PUT', `/api/resource/Memo/${doc.name}`, { json: { subject: 'two', modified: doc.modified } });
    expect(res.status).toBe(200);
    expect(res.body.data.subject).toBe('two');
    expect(res.body.data.modified).not.toBe(doc.modified);
    const again = await t.call('PUT', `/api/resource/Memo/${doc.name}`, { json: { subject: 'three', modified: res.body.data.modified } });
    expect(again.status).toBe(200);
    expect(again.body.data.subject).toBe('three');
  });

  it('a PUT with a stale modified answers 417 TimestampMismatchError and changes nothing', async () => {
    const t = await memoTenant();
    const doc = await insert(t, 'Memo', { subject: 'one', body: 'b' });
    const first = await t.call('PUT', `/api/resource/Memo/${doc.name}`, { json: { subject: 'two', modified: doc.modified } });
    expect(first.status).toBe(200);
    const stale = await t.call('PUT', `/api/resource/Memo/${doc.name}`, { json: { subject: 'lost update', body: 'x', modified: doc.modified } });
    expectError(stale, 417, 'TimestampMismatchError');
    const messages = serverMessages(stale.body);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`Error: ${doc.name} (Memo) has been modified after you have opened it`);
    expect(messages[0]).toContain('Please refresh to get the latest document.');
    expect(await fetchDoc(t, 'Memo', doc.name)).toEqual(first.body.data);
  });

  it('modified is compared as exact text: the ISO "T" spelling of the current value is a mismatch', async () => {
    const t = await memoTenant();
    const doc = await insert(t, 'Memo', { subject: 'one' });
    const iso = (doc.modified as string).replace(' ', 'T');
    expectError(await t.call('PUT', `/api/resource/Memo/${doc.name}`, { json: { subject: 'two', modified: iso } }), 417, 'TimestampMismatchError');
    expect(await fetchDoc(t, 'Memo', doc.name)).toEqual(doc);
  });

  it('a PUT without modified is not checked: two writers in a row both succeed', async () => {
    const t = await memoTenant();
    const doc = await insert(t, 'Memo', { subject: 'one' });
    expect((await t.call('PUT', `/api/resource/Memo/${doc.name}`, { json: { subject: 'two' } })).status).toBe(200);
    const last = await t.call('PUT', `/api/resource/Memo/${doc.name}`, { json: { body: 'three' } });
    expect(last.status).toBe(200);
    expect(last.body.data).toMatchObject({ subject: 'two', body: 'three' });
  });

  it('modified sent in a form body data= is checked the same way', async () => {
    const t = await memoTenant();
    const doc = await insert(t, 'Memo', { subject: 'one' });
    await t.call('PUT', `/api/resource/Memo/${doc.name}`, { json: { subject: 'two' } });
    const res = await t.call('PUT', `/api/resource/Memo/${doc.name}`, { form: { data: JSON.stringify({ subject: 'x', modified: doc.modified }) } });
    expectError(res, 417, 'TimestampMismatchError');
    expect((await fetchDoc(t, 'Memo', doc.name)).subject).toBe('two');
  });
});
