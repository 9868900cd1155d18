import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM, CLAIM_ITEM, tenantWithDoctypes } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { expectError, fetchDoc, HASH_RE, insert, listNames, serverMessages, tableCount } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** `Claim` (submittable, hash): title, amount, remark (allow_on_submit), rows of `Claim Item`. */
const claimTenant = () => tenantWithDoctypes(server, CLAIM_ITEM, CLAIM);

const put = (t: TestTenant, name: string, json: Record<string, unknown>) => t.call('PUT', `/api/resource/Claim/${name}`, { json });

async function submitted(t: TestTenant, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const doc = await insert(t, 'Claim', { title: 'Trip', amount: 10, ...extra });
  const res = await put(t, doc.name, { docstatus: 1 });
  if (res.status !== 200) throw new Error(`submit failed: ${res.text}`);
  return res.body.data;
}

async function cancelled(t: TestTenant): Promise<Record<string, any>> {
  const doc = await submitted(t);
  const res = await put(t, doc.name, { docstatus: 2 });
  if (res.status !== 200) throw new Error(`cancel failed: ${res.text}`);
  return res.body.data;
}

describe('submit', () => {
  it('a submittable DocType gets an amended_from field', async () => {
    const t = await claimTenant();
    const meta = await fetchDoc(t, 'DocType', 'Claim');
    const field = (meta.fields as Array<Record<string, any>>).find((f) => f.fieldname === 'amended_from');
    expect(field).toMatchObject({ fieldtype: 'Link', options: 'Claim' });
  });

  it('a PUT {"docstatus":1} submits a draft, rows included', async () => {
    const t = await claimTenant();
    const doc = await insert(t, 'Claim', { title: 'Trip', amount: 10, items: [{ item: 'taxi' }] });
    expect(doc.docstatus).toBe(0);
    const res = await put(t, doc.name, { docstatus: 1 });
    expect(res.status).toBe(200);
    expect(res.body.data.docstatus).toBe(1);
    const got = await fetchDoc(t, 'Claim', doc.name);
    expect(got.docstatus).toBe(1);
    expect(got.items[0].docstatus).toBe(1);
  });

  it('a POST with docstatus 1 creates the document submitted', async () => {
    const t = await claimTenant();
    const doc = await insert(t, 'Claim', { title: 'Trip', docstatus: 1 });
    expect(doc.docstatus).toBe(1);
    expect((await fetchDoc(t, 'Claim', doc.name)).docstatus).toBe(1);
  });

  it('a POST with docstatus 2 answers 417 DocstatusTransitionError and writes nothing', async () => {
    const t = await claimTenant();
    expectError(await t.call('POST', '/api/resource/Claim', { json: { title: 'x', docstatus: 2 } }), 417, 'DocstatusTransitionError');
    expect(await listNames(t, 'Claim')).toEqual([]);
  });

  it.each([
    ['3', 3],
    ['"abc"', 'abc'],
    ['-1', -1],
  ])('a docstatus of %s answers 417 and writes nothing', async (_what, docstatus) => {
    const t = await claimTenant();
    const res = await t.call('POST', '/api/resource/Claim', { json: { title: 'x', docstatus } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Claim')).toEqual([]);
  });
});

describe('update after submit', () => {
  it('after submit an allow_on_submit field can change', async () => {
    const t = await claimTenant();
    const doc = await submitted(t);
    const res = await put(t, doc.name, { remark: 'approved' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ remark: 'approved', docstatus: 1 });
    expect((await fetchDoc(t, 'Claim', doc.name)).remark).toBe('approved');
  });

  it('after submit an allow_on_submit field of a row can change', async () => {
    const t = await claimTenant();
    const doc = await submitted(t, { items: [{ item: 'taxi' }] });
    const row = doc.items[0];
    const res = await put(t, doc.name, { items: [{ name: row.name, note: 'receipt attached' }] });
    expect(res.status).toBe(200);
    expect(res.body.data.items[0]).toMatchObject({ name: row.name, item: 'taxi', note: 'receipt attached' });
  });

  it('after submit any other field change answers 417 UpdateAfterSubmitError and changes nothing', async () => {
    const t = await claimTenant();
    const doc = await submitted(t);
    const res = await put(t, doc.name, { amount: 20, remark: 'sneaky' });
    expectError(res, 417, 'UpdateAfterSubmitError');
    expect(serverMessages(res.body)[0]).toContain('Not allowed to change Amount after submission');
    expect(await fetchDoc(t, 'Claim', doc.name)).toEqual(doc);
  });

  it('after submit adding a row answers 417 UpdateAfterSubmitError and changes nothing', async () => {
    const t = await claimTenant();
    const doc = await submitted(t, { items: [{ item: 'taxi' }] });
    const res = await put(t, doc.name, { items: [{ name: doc.items[0].name }, { item: 'hotel' }] });
    expectError(res, 417, 'UpdateAfterSubmitError');
    expect(await fetchDoc(t, 'Claim', doc.name)).toEqual(doc);
    expect(await tableCount(server, t, 'Claim Item')).toBe(1);
  });

  it('a submitted document cannot go back to draft: 1→0 answers 417 DocstatusTransitionError', async () => {
    const t = await claimTenant();
    const doc = await submitted(t);
    const res = await put(t, doc.name, { docstatus: 0 });
    expectError(res, 417, 'DocstatusTransitionError');
    expect(serverMessages(res.body)).toEqual(['Cannot change docstatus from 1 (Submitted) to 0 (Draft)']);
    expect((await fetchDoc(t, 'Claim', doc.name)).docstatus).toBe(1);
  });
});

describe('cancel', () => {
  it('a PUT {"docstatus":2} cancels a submitted document', async () => {
    const t = await claimTenant();
    const doc = await submitted(t, { items: [{ item: 'taxi' }] });
    const res = await put(t, doc.name, { docstatus: 2 });
    expect(res.status).toBe(200);
    expect(res.body.data.docstatus).toBe(2);
    const got = await fetchDoc(t, 'Claim', doc.name);
    expect(got.docstatus).toBe(2);
    expect(got.items[0].docstatus).toBe(2);
  });

  it('a draft cannot be cancelled: 0→2 answers 417 DocstatusTransitionError', async () => {
    const t = await claimTenant();
    const doc = await insert(t, 'Claim', { title: 'Trip' });
    const res = await put(t, doc.name, { docstatus: 2 });
    expectError(res, 417, 'DocstatusTransitionError');
    expect(serverMessages(res.body)).toEqual(['Cannot change docstatus from 0 (Draft) to 2 (Cancelled)']);
    expect(await fetchDoc(t, 'Claim', doc.name)).toEqual(doc);
  });

  it.each([
    ['a field', { title: 'changed' }],
    ['an allow_on_submit field', { remark: 'changed' }],
    ['docstatus 0', { docstatus: 0 }],
    ['docstatus 1', { docstatus: 1 }],
  ])('editing a cancelled document (%s) answers 417 "Cannot edit cancelled document" and changes nothing', async (_what, patch) => {
    const t = await claimTenant();
    const doc = await cancelled(t);
    const res = await put(t, doc.name, patch);
    expectError(res, 417, 'ValidationError');
    expect(serverMessages(res.body)).toEqual(['Cannot edit cancelled document']);
    expect(await fetchDoc(t, 'Claim', doc.name)).toEqual(doc);
  });
});

describe('delete', () => {
  it('deleting a submitted document answers 417 and keeps it', async () => {
    const t = await claimTenant();
    const doc = await submitted(t);
    const res = await t.call('DELETE', `/api/resource/Claim/${doc.name}`);
    expectError(res, 417, 'ValidationError');
    expect(serverMessages(res.body)[0]).toContain('Submitted Record cannot be deleted. You must Cancel it first.');
    expect(await fetchDoc(t, 'Claim', doc.name)).toEqual(doc);
  });

  it('a cancelled document can be deleted', async () => {
    const t = await claimTenant();
    const doc = await cancelled(t);
    expect((await t.call('DELETE', `/api/resource/Claim/${doc.name}`)).status).toBe(202);
    expect(await listNames(t, 'Claim')).toEqual([]);
  });
});

describe('amend', () => {
  it('amending a cancelled document names the copy <orig>-1, then <orig>-2', async () => {
    const t = await claimTenant();
    const orig = await cancelled(t);
    expect(orig.name).toMatch(HASH_RE);

    const first = await insert(t, 'Claim', { title: 'Trip', amount: 11, amended_from: orig.name });
    expect(first.name).toBe(`${orig.name}-1`);
    expect(first).toMatchObject({ amended_from: orig.name, docstatus: 0, amount: 11 });

    expect((await put(t, first.name, { docstatus: 1 })).status).toBe(200);
    expect((await put(t, first.name, { docstatus: 2 })).status).toBe(200);

    const second = await insert(t, 'Claim', { title: 'Trip', amount: 12, amended_from: first.name });
    expect(second.name).toBe(`${orig.name}-2`);
    expect(second.amended_from).toBe(first.name);
    expect((await fetchDoc(t, 'Claim', orig.name)).docstatus).toBe(2);
  });

  it('amending a submitted (not cancelled) document answers 417 and writes nothing', async () => {
    const t = await claimTenant();
    const orig = await submitted(t);
    const res = await t.call('POST', '/api/resource/Claim', { json: { title: 'Trip', amended_from: orig.name } });
    expectError(res, 417, 'ValidationError');
    expect(serverMessages(res.body)[0]).toContain('cannot be amended because it is not cancelled');
    expect(await listNames(t, 'Claim')).toEqual([orig.name]);
  });

  it('amending a draft answers 417 and writes nothing', async () => {
    const t = await claimTenant();
    const orig = await insert(t, 'Claim', { title: 'Trip' });
    expectError(await t.call('POST', '/api/resource/Claim', { json: { title: 'Trip', amended_from: orig.name } }), 417, 'ValidationError');
    expect(await listNames(t, 'Claim')).toEqual([orig.name]);
  });

  it('amending a document that does not exist is refused and writes nothing', async () => {
    const t = await claimTenant();
    const res = await t.call('POST', '/api/resource/Claim', { json: { title: 'Trip', amended_from: 'nosuchclaim' } });
    expect([404, 417]).toContain(res.status);
    expect(await listNames(t, 'Claim')).toEqual([]);
  });
});
