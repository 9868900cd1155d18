import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDoctype, GADGET, tenantWithDoctypes } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { expectError, fetchDoc, insert, listNames, serverMessages, stable } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** `Gadget` (hash) with one field per validation rule under test. */
const gadgetTenant = () => tenantWithDoctypes(server, GADGET);

/** POSTs `body` and asserts the refusal wrote nothing. */
async function refusedCreate(t: TestTenant, body: Record<string, unknown>, status: number, excType: string) {
  const res = await t.call('POST', '/api/resource/Gadget', { json: body });
  expectError(res, status, excType);
  expect(await listNames(t, 'Gadget')).toEqual([]);
  return res;
}

/** PUTs `patch` onto `doc` and asserts the refusal changed nothing. */
async function refusedUpdate(t: TestTenant, doc: Record<string, any>, patch: Record<string, unknown>, status: number, excType: string) {
  const res = await t.call('PUT', `/api/resource/Gadget/${doc.name}`, { json: patch });
  expectError(res, status, excType);
  expect(await fetchDoc(t, 'Gadget', doc.name)).toEqual(doc);
  return res;
}

describe('mandatory', () => {
  it('a missing reqd field answers 417 MandatoryError "Error: Value missing for Gadget: Title" and writes nothing', async () => {
    const t = await gadgetTenant();
    const res = await refusedCreate(t, { maker: 'ACME' }, 417, 'MandatoryError');
    expect(serverMessages(res.body)).toEqual(['Error: Value missing for Gadget: Title']);
  });

  it.each([
    ['null', null],
    ['empty', ''],
    ['blank', '   '],
  ])('a reqd field sent %s is missing', async (_what, title) => {
    const t = await gadgetTenant();
    const res = await refusedCreate(t, { title }, 417, 'MandatoryError');
    expect(serverMessages(res.body)).toEqual(['Error: Value missing for Gadget: Title']);
  });

  it('every missing reqd field gets its own message', async () => {
    const t = await server.tenant();
    await createDoctype(t, {
      name: 'Form',
      fields: [
        { fieldname: 'first', label: 'First Name', fieldtype: 'Data', reqd: 1 },
        { fieldname: 'born', label: 'Born', fieldtype: 'Date', reqd: 1 },
      ],
    });
    const res = await t.call('POST', '/api/resource/Form', { json: {} });
    expectError(res, 417, 'MandatoryError');
    expect(serverMessages(res.body)).toEqual(['Error: Value missing for Form: First Name', 'Error: Value missing for Form: Born']);
    expect(await listNames(t, 'Form')).toEqual([]);
  });

  it('a PUT clearing a reqd field answers 417 MandatoryError and changes nothing', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', maker: 'ACME' });
    await refusedUpdate(t, doc, { title: null, maker: 'Globex' }, 417, 'MandatoryError');
  });
});

describe('coercion (stricter than Frappe)', () => {
  it.each(['qty', 'weight', 'price', 'active', 'made_on', 'seen_at'])('"abc" for %s answers 417 ValidationError and writes nothing', async (field) => {
    const t = await gadgetTenant();
    await refusedCreate(t, { title: 'Widget', [field]: 'abc' }, 417, 'ValidationError');
  });

  it.each(['qty', 'weight', 'price', 'active'])('"abc" for %s in a PUT answers 417 and does not store 0', async (field) => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', qty: 7, weight: 1.5, price: 9.99, active: 1 });
    await refusedUpdate(t, doc, { [field]: 'abc' }, 417, 'ValidationError');
  });

  it.each([
    ['a date that does not exist', 'made_on', '2025-02-30'],
    ['a datetime with hour 25', 'seen_at', '2025-02-05 25:00:00'],
    ['a month name', 'made_on', '5 Feb 2025'],
    ['a Check of 2', 'active', 2],
    ['a Check of "yes"', 'active', 'yes'],
    ['a fractional text for Int', 'qty', '1.5.3'],
  ])('%s answers 417 ValidationError and writes nothing', async (_what, field, value) => {
    const t = await gadgetTenant();
    await refusedCreate(t, { title: 'Widget', [field]: value }, 417, 'ValidationError');
  });

  it('numeric strings are coerced to numbers', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', qty: '42', weight: ' 3.25 ', price: '12.50', active: '1' });
    expect(doc).toMatchObject({ qty: 42, weight: 3.25, price: 12.5, active: 1 });
    expect(await fetchDoc(t, 'Gadget', doc.name)).toMatchObject({ qty: 42, weight: 3.25, price: 12.5, active: 1 });
  });

  it('a number sent for a Data field is stored as its text', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', maker: 1234 });
    expect(doc.maker).toBe('1234');
  });
});

describe('select', () => {
  it('a Select value among the options is stored', async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'Widget', colour: 'Green' })).colour).toBe('Green');
  });

  it('a Select field not sent takes its first option', async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'Widget' })).colour).toBe('Red');
  });

  it("a Select value not in the options answers 417 ValidationError with Frappe's message and writes nothing", async () => {
    const t = await gadgetTenant();
    const res = await refusedCreate(t, { title: 'Widget', colour: 'Purple' }, 417, 'ValidationError');
    expect(serverMessages(res.body)).toEqual(['Colour cannot be "Purple". It should be one of "Red", "Green", "Blue"']);
  });

  it('a Select value differing only in case is refused', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', colour: 'Blue' });
    await refusedUpdate(t, doc, { colour: 'blue' }, 417, 'ValidationError');
  });
});

describe('links', () => {
  it('a Link to an existing record is stored', async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'Widget', keeper: 'Administrator' })).keeper).toBe('Administrator');
  });

  it('a Link to a missing record answers 417 LinkValidationError "Could not find Keeper: …" and writes nothing', async () => {
    const t = await gadgetTenant();
    const res = await refusedCreate(t, { title: 'Widget', keeper: 'nobody@example.com' }, 417, 'LinkValidationError');
    expect(serverMessages(res.body)).toEqual(['Could not find Keeper: nobody@example.com']);
  });

  it('a PUT linking to a missing record answers 417 LinkValidationError and changes nothing', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', keeper: 'Administrator' });
    await refusedUpdate(t, doc, { keeper: 'ghost', maker: 'x' }, 417, 'LinkValidationError');
  });

  it('a record that is linked to cannot be deleted (417 LinkExistsError)', async () => {
    const t = await server.tenant();
    await createDoctype(t, { name: 'Shelf', autoname: 'prompt', fields: [{ fieldname: 'label', fieldtype: 'Data' }] });
    await createDoctype(t, { name: 'Jar', fields: [{ fieldname: 'shelf', label: 'Shelf', fieldtype: 'Link', options: 'Shelf' }] });
    await insert(t, 'Shelf', { name: 'S1' });
    await insert(t, 'Jar', { shelf: 'S1' });
    expectError(await t.call('DELETE', '/api/resource/Shelf/S1'), 417, 'LinkExistsError');
    expect(await listNames(t, 'Shelf')).toEqual(['S1']);
  });
});

describe('unique', () => {
  it('a duplicate value of a unique field answers 417 UniqueValidationError "Code must be unique" and writes nothing', async () => {
    const t = await gadgetTenant();
    const first = await insert(t, 'Gadget', { title: 'One', code: 'X-1' });
    const res = await t.call('POST', '/api/resource/Gadget', { json: { title: 'Two', code: 'X-1' } });
    expectError(res, 417, 'UniqueValidationError');
    expect(serverMessages(res.body)).toEqual(['Code must be unique']);
    expect(await listNames(t, 'Gadget')).toEqual([first.name]);
  });

  it('a PUT to a value another document holds answers 417 UniqueValidationError and changes nothing', async () => {
    const t = await gadgetTenant();
    await insert(t, 'Gadget', { title: 'One', code: 'X-1' });
    const two = await insert(t, 'Gadget', { title: 'Two', code: 'X-2' });
    await refusedUpdate(t, two, { code: 'X-1', title: 'Renamed' }, 417, 'UniqueValidationError');
  });

  it('several documents may leave a unique field empty', async () => {
    const t = await gadgetTenant();
    await insert(t, 'Gadget', { title: 'One' });
    await insert(t, 'Gadget', { title: 'Two' });
    expect(await listNames(t, 'Gadget')).toHaveLength(2);
  });
});

describe('lengths', () => {
  it("a value longer than the field's length answers 417 CharacterLengthExceededError and writes nothing", async () => {
    const t = await gadgetTenant();
    await refusedCreate(t, { title: 'Widget', short: 'sixsix' }, 417, 'CharacterLengthExceededError');
  });

  it("a value exactly the field's length is stored", async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'Widget', short: 'fivec' })).short).toBe('fivec');
  });

  it('a Data value over 140 characters answers 417 CharacterLengthExceededError; 140 is stored', async () => {
    const t = await gadgetTenant();
    await refusedCreate(t, { title: 'x'.repeat(141) }, 417, 'CharacterLengthExceededError');
    expect((await insert(t, 'Gadget', { title: 'x'.repeat(140) })).title).toHaveLength(140);
  });

  it('length counts characters, not bytes', async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'Widget', short: 'éééé€' })).short).toBe('éééé€');
  });

  it('a PUT exceeding the length answers 417 and changes nothing', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', short: 'ok' });
    await refusedUpdate(t, doc, { short: 'too long', maker: 'x' }, 417, 'CharacterLengthExceededError');
  });
});

describe('non_negative', () => {
  it('a negative value in a non_negative field answers 417 NonNegativeError and writes nothing', async () => {
    const t = await gadgetTenant();
    await refusedCreate(t, { title: 'Widget', stock: -1 }, 417, 'NonNegativeError');
  });

  it('zero and positive values in a non_negative field are stored', async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'Widget', stock: 0 })).stock).toBe(0);
    expect((await insert(t, 'Gadget', { title: 'Widget', stock: 3 })).stock).toBe(3);
  });
});

describe('Data options', () => {
  it('a valid Email is stored; an invalid one answers 417 InvalidEmailAddressError', async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'A', email: 'ann@example.com' })).email).toBe('ann@example.com');
    const res = await t.call('POST', '/api/resource/Gadget', { json: { title: 'B', email: 'not an email' } });
    expectError(res, 417, 'InvalidEmailAddressError');
    expect(await listNames(t, 'Gadget')).toHaveLength(1);
  });

  it('a valid Phone is stored; letters answer 417 InvalidPhoneNumberError', async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'A', phone: '+44 (20) 7946-0958' })).phone).toBe('+44 (20) 7946-0958');
    const res = await t.call('POST', '/api/resource/Gadget', { json: { title: 'B', phone: 'call me' } });
    expectError(res, 417, 'InvalidPhoneNumberError');
    expect(await listNames(t, 'Gadget')).toHaveLength(1);
  });

  it('a valid URL is stored; text that is not a URL answers 417 ValidationError (frappe.throw in validate_url)', async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'A', site: 'https://example.com/x?y=1' })).site).toBe('https://example.com/x?y=1');
    const res = await t.call('POST', '/api/resource/Gadget', { json: { title: 'B', site: 'not a url' } });
    expectError(res, 417, 'ValidationError');
    expect(serverMessages(res.body)).toHaveLength(1);
    expect(serverMessages(res.body)[0]).toContain('is not a valid URL');
    expect(await listNames(t, 'Gadget')).toHaveLength(1);
  });
  it("a URL with a scheme other than http(s) is accepted, as Frappe's validate_url only requires a host", async () => {
    const t = await gadgetTenant();
    expect((await insert(t, 'Gadget', { title: 'A', site: 'ftp://files.example.com/pub' })).site).toBe('ftp://files.example.com/pub');
  });
});

describe('set_only_once', () => {
  it('changing a set_only_once value answers 417 CannotChangeConstantError "Value cannot be changed for Serial" and changes nothing', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', serial: 'SN-1' });
    const res = await refusedUpdate(t, doc, { serial: 'SN-2', maker: 'x' }, 417, 'CannotChangeConstantError');
    expect(serverMessages(res.body)).toEqual(['Value cannot be changed for Serial']);
  });

  it('sending the same set_only_once value again is not a change', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', serial: 'SN-1' });
    const res = await t.call('PUT', `/api/resource/Gadget/${doc.name}`, { json: { serial: 'SN-1', maker: 'x' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ serial: 'SN-1', maker: 'x' });
  });

  it('a set_only_once field left empty on create can be set later, then no more', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget' });
    const set = await t.call('PUT', `/api/resource/Gadget/${doc.name}`, { json: { serial: 'SN-9' } });
    expect(set.status).toBe(200);
    expect(set.body.data.serial).toBe('SN-9');
    await refusedUpdate(t, set.body.data, { serial: null }, 417, 'CannotChangeConstantError');
  });
});

describe('nothing half-written', () => {
  it('a refused PUT touching several fields changes none of them', async () => {
    const t = await gadgetTenant();
    const doc = await insert(t, 'Gadget', { title: 'Widget', maker: 'ACME', qty: 1, colour: 'Red' });
    const res = await t.call('PUT', `/api/resource/Gadget/${doc.name}`, { json: { maker: 'Globex', qty: 2, colour: 'Mauve' } });
    expectError(res, 417, 'ValidationError');
    expect(stable(await fetchDoc(t, 'Gadget', doc.name))).toEqual(stable(doc));
    expect((await fetchDoc(t, 'Gadget', doc.name)).modified).toBe(doc.modified);
  });
});
