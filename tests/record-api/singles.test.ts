import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOP_SETTINGS, tenantWithDoctypes } from '../support/doctypes';
import { startTestServer, type TestServer } from '../support/server';
import { DATETIME_RE, expectError, fetchDoc } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** `Shop Settings` (issingle) with defaults on several fieldtypes. */
const settingsTenant = () => tenantWithDoctypes(server, SHOP_SETTINGS);

const PATH = '/api/resource/Shop%20Settings/Shop%20Settings';

describe('singles', () => {
  it('GET /api/resource/<DT>/<DT> returns the single record with name = DocType', async () => {
    const t = await settingsTenant();
    const res = await t.call('GET', PATH);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Shop Settings', doctype: 'Shop Settings', docstatus: 0, idx: 0 });
    expect(res.body.data).not.toHaveProperty('motto');
  });

  it('a single never saved answers its field defaults', async () => {
    const t = await settingsTenant();
    const doc = await fetchDoc(t, 'Shop Settings', 'Shop Settings');
    expect(doc).toMatchObject({ shop_name: 'My Shop', max_items: 10, enabled: 1, currency: 'EUR' });
  });

  it('a PUT updates the single as a merge; a later GET shows it', async () => {
    const t = await settingsTenant();
    const first = await t.call('PUT', PATH, { json: { max_items: 25, shop_name: 'Corner Shop' } });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ name: 'Shop Settings', doctype: 'Shop Settings', max_items: 25, shop_name: 'Corner Shop' });
    const res = await t.call('PUT', PATH, { json: { motto: 'Buy more' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ max_items: 25, shop_name: 'Corner Shop', motto: 'Buy more' });
    expect(res.body.data.modified).toMatch(DATETIME_RE);
    expect(await fetchDoc(t, 'Shop Settings', 'Shop Settings')).toEqual(res.body.data);
  });

  it('defaults not overwritten by the first PUT are kept in the saved single', async () => {
    const t = await settingsTenant();
    const res = await t.call('PUT', PATH, { json: { motto: 'Buy more' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ shop_name: 'My Shop', max_items: 10, enabled: 1, currency: 'EUR', motto: 'Buy more' });
  });

  it('a PUT with a stale modified answers 417 TimestampMismatchError and changes nothing', async () => {
    const t = await settingsTenant();
    const first = await t.call('PUT', PATH, { json: { motto: 'one' } });
    expect(first.status).toBe(200);
    const second = await t.call('PUT', PATH, { json: { motto: 'two', modified: first.body.data.modified } });
    expect(second.status).toBe(200);
    const stale = await t.call('PUT', PATH, { json: { motto: 'three', modified: first.body.data.modified } });
    expectError(stale, 417, 'TimestampMismatchError');
    expect((await fetchDoc(t, 'Shop Settings', 'Shop Settings')).motto).toBe('two');
  });

  it('a PUT with a value that is not of its fieldtype answers 417 and changes nothing', async () => {
    const t = await settingsTenant();
    const before = await (await t.call('PUT', PATH, { json: { max_items: 5 } })).body.data;
    expectError(await t.call('PUT', PATH, { json: { max_items: 'abc', motto: 'x' } }), 417, 'ValidationError');
    expectError(await t.call('PUT', PATH, { json: { currency: 'GBP' } }), 417, 'ValidationError');
    expect(await fetchDoc(t, 'Shop Settings', 'Shop Settings')).toEqual(before);
  });

  it('listing a single DocType answers 417', async () => {
    const t = await settingsTenant();
    const res = await t.call('GET', '/api/resource/Shop%20Settings');
    expectError(res, 417, 'ValidationError');
  });

  it("two tenants' singles are independent", async () => {
    const a = await settingsTenant();
    const b = await settingsTenant();
    expect((await a.call('PUT', PATH, { json: { shop_name: 'A shop' } })).status).toBe(200);
    expect((await fetchDoc(a, 'Shop Settings', 'Shop Settings')).shop_name).toBe('A shop');
    expect((await fetchDoc(b, 'Shop Settings', 'Shop Settings')).shop_name).not.toBe('A shop');
  });
});
