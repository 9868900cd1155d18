import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDoctype, SAMPLE, tenantWithDoctypes } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { DATE_RE, DATETIME_RE, fetchDoc, insert } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A tenant with `Sample`: one field of each value-bearing fieldtype under test. */
const sampleTenant = () => tenantWithDoctypes(server, SAMPLE);

/** Sends `value` in `field` on create, and returns what the create and a later GET answer for it. */
async function roundTrip(t: TestTenant, field: string, value: unknown): Promise<[unknown, unknown]> {
  const created = await insert(t, 'Sample', { [field]: value });
  const got = await fetchDoc(t, 'Sample', created.name);
  return [created[field], got[field]];
}

describe('datetimes', () => {
  it('creation and modified are "YYYY-MM-DD HH:MM:SS[.ffffff]" with a space separator', async () => {
    const t = await sampleTenant();
    const doc = await insert(t, 'Sample', {});
    expect(doc.creation).toMatch(DATETIME_RE);
    expect(doc.modified).toMatch(DATETIME_RE);
    expect(doc.creation).not.toContain('T');
  });

  it('a Datetime with microseconds comes back with 6 fraction digits', async () => {
    const t = await sampleTenant();
    expect(await roundTrip(t, 'at', '2025-02-05 12:23:24.123456')).toEqual(['2025-02-05 12:23:24.123456', '2025-02-05 12:23:24.123456']);
  });

  it('a Datetime with a short fraction is padded to 6 digits', async () => {
    const t = await sampleTenant();
    expect(await roundTrip(t, 'at', '2025-02-05 12:23:24.5')).toEqual(['2025-02-05 12:23:24.500000', '2025-02-05 12:23:24.500000']);
  });

  it('a Datetime with zero microseconds comes back without a fraction', async () => {
    const t = await sampleTenant();
    expect(await roundTrip(t, 'at', '2025-02-05 12:23:24.000000')).toEqual(['2025-02-05 12:23:24', '2025-02-05 12:23:24']);
    expect(await roundTrip(t, 'at', '2025-02-05 12:23:24')).toEqual(['2025-02-05 12:23:24', '2025-02-05 12:23:24']);
  });

  it('an ISO "T" Datetime is stored and answered with a space separator', async () => {
    const t = await sampleTenant();
    expect(await roundTrip(t, 'at', '2025-02-05T12:23:24')).toEqual(['2025-02-05 12:23:24', '2025-02-05 12:23:24']);
  });
});

describe('dates and times', () => {
  it('a Date comes back as "YYYY-MM-DD"', async () => {
    const t = await sampleTenant();
    const [created, got] = await roundTrip(t, 'on', '2024-02-29');
    expect(created).toBe('2024-02-29');
    expect(got).toBe('2024-02-29');
    expect(got).toMatch(DATE_RE);
  });

  it('a Time comes back as "HH:MM:SS"', async () => {
    const t = await sampleTenant();
    expect(await roundTrip(t, 'clock', '09:05:03')).toEqual(['09:05:03', '09:05:03']);
  });

  it('a Time with a fraction comes back as "HH:MM:SS.ffffff"', async () => {
    const t = await sampleTenant();
    expect(await roundTrip(t, 'clock', '23:59:58.25')).toEqual(['23:59:58.250000', '23:59:58.250000']);
  });

  it("a Time field not sent is set to the current time, as Frappe's new_doc does", async () => {
    const t = await sampleTenant();
    const doc = await insert(t, 'Sample', {});
    expect(doc.clock).toMatch(/^\d{2}:\d{2}:\d{2}(\.\d{6})?$/);
  });
});

describe('numbers', () => {
  it('Currency, Float, Percent and Int are JSON numbers', async () => {
    const t = await sampleTenant();
    const created = await insert(t, 'Sample', { price: 12.5, ratio: 0.25, share: 33.5, count: 42 });
    const res = await t.call('GET', `/api/resource/Sample/${created.name}`);
    expect(res.body.data).toMatchObject({ price: 12.5, ratio: 0.25, share: 33.5, count: 42 });
    for (const key of ['price', 'ratio', 'share', 'count']) expect(typeof res.body.data[key]).toBe('number');
    expect(res.text).toContain('"price":12.5');
    expect(res.text).toContain('"count":42');
  });

  it('numeric fields not sent are 0, not null', async () => {
    const t = await sampleTenant();
    const doc = await insert(t, 'Sample', {});
    expect(doc).toMatchObject({ price: 0, ratio: 0, share: 0, count: 0, flag: 0 });
  });

  it('a decimal sent as text comes back as a JSON number', async () => {
    const t = await sampleTenant();
    expect(await roundTrip(t, 'price', '1234.50')).toEqual([1234.5, 1234.5]);
  });
});

describe('checks', () => {
  it.each([
    [true, 1],
    [false, 0],
    [1, 1],
    [0, 0],
    ['1', 1],
    ['0', 0],
  ])('Check %j comes back as %j', async (sent, expected) => {
    const t = await sampleTenant();
    expect(await roundTrip(t, 'flag', sent)).toEqual([expected, expected]);
  });
});

describe('JSON fields', () => {
  it('an object in a JSON field comes back as JSON text', async () => {
    const t = await sampleTenant();
    const payload = { a: 1, b: [true, null, 'x'], c: { d: 'é' } };
    const [created, got] = await roundTrip(t, 'payload', payload);
    expect(typeof created).toBe('string');
    expect(typeof got).toBe('string');
    expect(JSON.parse(created as string)).toEqual(payload);
    expect(JSON.parse(got as string)).toEqual(payload);
  });

  it('JSON text in a JSON field is kept as that text', async () => {
    const t = await sampleTenant();
    const [created, got] = await roundTrip(t, 'payload', '{"k":[1,2,3]}');
    expect(JSON.parse(created as string)).toEqual({ k: [1, 2, 3] });
    expect(JSON.parse(got as string)).toEqual({ k: [1, 2, 3] });
  });
});

describe('names', () => {
  it('an autoincrement name is a JSON integer in the document and in lists', async () => {
    const t = await server.tenant();
    await createDoctype(t, { name: 'Counter', autoname: 'autoincrement', fields: [{ fieldname: 'label', fieldtype: 'Data' }] });
    const created = await t.call('POST', '/api/resource/Counter', { json: { label: 'one' } });
    expect(created.status).toBe(200);
    expect(created.body.data.name).toBe(1);
    expect(created.text).toContain('"name":1,');
    const got = await t.call('GET', '/api/resource/Counter/1');
    expect(got.body.data.name).toBe(1);
    const list = await t.call('GET', '/api/resource/Counter');
    expect(list.body.data).toEqual([{ name: 1 }]);
  });
});
