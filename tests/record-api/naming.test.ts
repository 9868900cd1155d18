import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDoctype, tenantWithDoctypes, type FieldDef } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { expectError, fetchDoc, HASH_RE, insert, listNames, serverMessages, UUID_RE } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const LABEL: FieldDef = { fieldname: 'label', label: 'Label', fieldtype: 'Data' };

function tenantWith(autoname: string, fields: FieldDef[] = [LABEL], name = 'Thing'): Promise<TestTenant> {
  return tenantWithDoctypes(server, { name, autoname, fields });
}

function utcParts(): { yyyy: string; mm: string } {
  const now = new Date();
  return { yyyy: String(now.getUTCFullYear()), mm: String(now.getUTCMonth() + 1).padStart(2, '0') };
}

describe('hash', () => {
  it('a hash name is 10 characters of [0-9a-v], different for each document', async () => {
    const t = await tenantWith('hash');
    const names = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const doc = await insert(t, 'Thing', { label: String(i) });
      expect(doc.name).toMatch(HASH_RE);
      names.add(doc.name);
    }
    expect(names.size).toBe(5);
  });

  it('a DocType without autoname is hash-named', async () => {
    const t = await server.tenant();
    await createDoctype(t, { name: 'Plain', fields: [LABEL] });
    expect((await insert(t, 'Plain', {})).name).toMatch(HASH_RE);
  });

  it('a client "name" is ignored for hash naming', async () => {
    const t = await tenantWith('hash');
    const doc = await insert(t, 'Thing', { name: 'my-own-name', label: 'x' });
    expect(doc.name).not.toBe('my-own-name');
    expect(doc.name).toMatch(HASH_RE);
    expectError(await t.call('GET', '/api/resource/Thing/my-own-name'), 404, 'DoesNotExistError');
  });
});

describe('autoincrement', () => {
  it('autoincrement names are the integers 1, 2, 3 in order', async () => {
    const t = await tenantWith('autoincrement');
    const names: unknown[] = [];
    for (let i = 0; i < 3; i++) names.push((await insert(t, 'Thing', { label: String(i) })).name);
    expect(names).toEqual([1, 2, 3]);
    expect((await fetchDoc(t, 'Thing', 2)).label).toBe('1');
  });

  it('a client "name" is ignored for autoincrement naming', async () => {
    const t = await tenantWith('autoincrement');
    const doc = await insert(t, 'Thing', { name: 77, label: 'x' });
    expect(doc.name).toBe(1);
  });

  it('a non-numeric name of an autoincrement DocType answers 404, not 500', async () => {
    const t = await tenantWith('autoincrement');
    await insert(t, 'Thing', {});
    expectError(await t.call('GET', '/api/resource/Thing/abc'), 404, 'DoesNotExistError');
    expectError(await t.call('PUT', '/api/resource/Thing/abc', { json: { label: 'x' } }), 404, 'DoesNotExistError');
    expectError(await t.call('DELETE', '/api/resource/Thing/99999999999999999999'), 404, 'DoesNotExistError');
  });
});

describe('field:', () => {
  it('field:<f> names the document by the stripped value of the field', async () => {
    const t = await tenantWith('field:code', [{ fieldname: 'code', label: 'Code', fieldtype: 'Data' }]);
    const doc = await insert(t, 'Thing', { code: '  SKU-1  ' });
    expect(doc.name).toBe('SKU-1');
    expect((await fetchDoc(t, 'Thing', 'SKU-1')).code).toBeDefined();
  });

  it.each([
    ['missing', {}],
    ['empty', { code: '' }],
    ['blank', { code: '   ' }],
  ])('field:<f> with the field %s answers 417 and writes nothing', async (_what, body) => {
    const t = await tenantWith('field:code', [{ fieldname: 'code', label: 'Code', fieldtype: 'Data' }]);
    const res = await t.call('POST', '/api/resource/Thing', { json: body });
    expectError(res, 417, 'ValidationError');
    expect(serverMessages(res.body)).toEqual(['Code is required']);
    expect(await listNames(t, 'Thing')).toEqual([]);
  });

  it('field:<f> with a value already used answers 409 DuplicateEntryError "<DocType> <name> already exists"', async () => {
    const t = await tenantWith('field:code', [
      { fieldname: 'code', label: 'Code', fieldtype: 'Data' },
      { fieldname: 'note', label: 'Note', fieldtype: 'Data' },
    ]);
    const first = await insert(t, 'Thing', { code: 'SKU-1', note: 'first' });
    const res = await t.call('POST', '/api/resource/Thing', { json: { code: 'SKU-1', note: 'second' } });
    expectError(res, 409, 'DuplicateEntryError');
    expect(serverMessages(res.body)).toEqual(['Thing SKU-1 already exists']);
    expect(await fetchDoc(t, 'Thing', 'SKU-1')).toEqual(first);
  });
});

describe('naming_series:', () => {
  const series: FieldDef[] = [{ fieldname: 'naming_series', label: 'Series', fieldtype: 'Select', options: 'BS-.####\nINV-.YYYY.-.###' }, LABEL];

  it('naming_series: uses the first option by default: BS-0001, BS-0002', async () => {
    const t = await tenantWith('naming_series:', series);
    const a = await insert(t, 'Thing', { label: 'a' });
    const b = await insert(t, 'Thing', { label: 'b' });
    expect([a.name, b.name]).toEqual(['BS-0001', 'BS-0002']);
    expect(a.naming_series).toBe('BS-.####');
  });

  it('naming_series: uses the series the client chose, with its own counter', async () => {
    const t = await tenantWith('naming_series:', series);
    const { yyyy } = utcParts();
    await insert(t, 'Thing', {});
    const a = await insert(t, 'Thing', { naming_series: 'INV-.YYYY.-.###' });
    const b = await insert(t, 'Thing', { naming_series: 'INV-.YYYY.-.###' });
    expect([a.name, b.name]).toEqual([`INV-${yyyy}-001`, `INV-${yyyy}-002`]);
    expect((await insert(t, 'Thing', {})).name).toBe('BS-0002');
  });
});

describe('format:', () => {
  it('format:PRE-{MM}-{field}-{###} replaces tokens and counts per prefix', async () => {
    const t = await tenantWith('format:PRE-{MM}-{region}-{###}', [{ fieldname: 'region', label: 'Region', fieldtype: 'Data' }]);
    const { mm } = utcParts();
    const a = await insert(t, 'Thing', { region: 'EU' });
    const b = await insert(t, 'Thing', { region: 'EU' });
    const c = await insert(t, 'Thing', { region: 'US' });
    expect([a.name, b.name, c.name]).toEqual([`PRE-${mm}-EU-001`, `PRE-${mm}-EU-002`, `PRE-${mm}-US-001`]);
  });
});

describe('old-style expression', () => {
  it('ABC-.YYYY.-.#### gives ABC-<year>-0001, ABC-<year>-0002', async () => {
    const t = await tenantWith('ABC-.YYYY.-.####');
    const { yyyy } = utcParts();
    const a = await insert(t, 'Thing', {});
    const b = await insert(t, 'Thing', {});
    expect([a.name, b.name]).toEqual([`ABC-${yyyy}-0001`, `ABC-${yyyy}-0002`]);
  });
});

describe('prompt', () => {
  it('prompt takes the name from the body\'s "name"', async () => {
    const t = await tenantWith('prompt');
    expect((await insert(t, 'Thing', { name: 'Chosen' })).name).toBe('Chosen');
    expect((await fetchDoc(t, 'Thing', 'Chosen')).name).toBe('Chosen');
  });

  it('prompt takes the name from "__newname"', async () => {
    const t = await tenantWith('prompt');
    expect((await insert(t, 'Thing', { __newname: 'Via Newname' })).name).toBe('Via Newname');
  });

  it('a prompt name is stripped of surrounding whitespace', async () => {
    const t = await tenantWith('prompt');
    expect((await insert(t, 'Thing', { name: '  padded  ' })).name).toBe('padded');
  });

  it.each([
    ['missing', {}],
    ['empty', { name: '' }],
    ['blank', { name: '   ' }],
  ])('prompt with the name %s answers 417 ValidationError and writes nothing', async (_what, body) => {
    const t = await tenantWith('prompt');
    const res = await t.call('POST', '/api/resource/Thing', { json: body });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Thing')).toEqual([]);
  });

  it('a duplicate prompt name answers 409 DuplicateEntryError and leaves the first document unchanged', async () => {
    const t = await tenantWith('prompt');
    const first = await insert(t, 'Thing', { name: 'Once', label: 'first' });
    const res = await t.call('POST', '/api/resource/Thing', { json: { name: 'Once', label: 'second' } });
    expectError(res, 409, 'DuplicateEntryError');
    expect(serverMessages(res.body)).toEqual(['Thing Once already exists']);
    expect(await fetchDoc(t, 'Thing', 'Once')).toEqual(first);
  });

  it.each(['a<b', 'a>b', '<script>'])('a name containing < or > (%s) answers 409 NameError and writes nothing', async (name) => {
    const t = await tenantWith('prompt');
    const res = await t.call('POST', '/api/resource/Thing', { json: { name } });
    expectError(res, 409, 'NameError');
    expect(await listNames(t, 'Thing')).toEqual([]);
  });

  it("a name equal to the DocType's name answers 409 NameError", async () => {
    const t = await tenantWith('prompt');
    expectError(await t.call('POST', '/api/resource/Thing', { json: { name: 'Thing' } }), 409, 'NameError');
    expect(await listNames(t, 'Thing')).toEqual([]);
  });

  it('a name starting with "New <DocType>" answers 409 NameError', async () => {
    const t = await tenantWith('prompt');
    expectError(await t.call('POST', '/api/resource/Thing', { json: { name: 'New Thing 1' } }), 409, 'NameError');
    expect(await listNames(t, 'Thing')).toEqual([]);
  });

  it("an integer name for a prompt (varchar) DocType answers 409 NameError, as Frappe's validate_name does", async () => {
    const t = await tenantWith('prompt');
    const res = await t.call('POST', '/api/resource/Thing', { json: { name: 123 } });
    expectError(res, 409, 'NameError');
    expect(await listNames(t, 'Thing')).toEqual([]);
  });
});

describe('UUID', () => {
  it('UUID naming generates a version 7 UUID when no name is sent', async () => {
    const t = await tenantWith('UUID');
    const a = await insert(t, 'Thing', {});
    const b = await insert(t, 'Thing', {});
    for (const doc of [a, b]) {
      expect(doc.name).toMatch(UUID_RE);
      expect(doc.name[14]).toBe('7');
      expect('89ab').toContain(doc.name[19]);
    }
    expect(a.name).not.toBe(b.name);
    expect((await fetchDoc(t, 'Thing', a.name)).name).toBe(a.name);
  });

  it('UUID naming accepts a UUID the client sends', async () => {
    const t = await tenantWith('UUID');
    const mine = '0195d7c4-6f3a-7b2e-9c41-2d5e8f9a0b1c';
    expect((await insert(t, 'Thing', { name: mine })).name).toBe(mine);
    expect((await fetchDoc(t, 'Thing', mine)).name).toBe(mine);
  });

  it('UUID naming refuses "XYZ" with 417 InvalidUUIDValue and writes nothing', async () => {
    const t = await tenantWith('UUID');
    expectError(await t.call('POST', '/api/resource/Thing', { json: { name: 'XYZ' } }), 417, 'InvalidUUIDValue');
    expect(await listNames(t, 'Thing')).toEqual([]);
  });
});
