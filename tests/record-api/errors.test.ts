import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAG, tenantWithDoctypes, WIDGET } from '../support/doctypes';
import { startTestServer, type CallResult, type TestServer } from '../support/server';
import { expectEnvelope, expectError, fetchDoc, insert, listNames, path, serverMessages } from './helpers';

let server: TestServer;
let production: TestServer;
beforeAll(async () => {
  [server, production] = await Promise.all([startTestServer(), startTestServer({ production: true })]);
});
afterAll(async () => {
  await Promise.all([server.close(), production.close()]);
});

/** `Widget` (hash) and `Tag` (prompt) covering the fieldtypes the hostile inputs aim at. */
const widgetTenant = (on: TestServer = server) => tenantWithDoctypes(on, WIDGET, TAG);

/** No client mistake may be answered with a 5xx; refusals come in Frappe's envelope. */
function expectClientError(res: CallResult, what: string): void {
  if (res.status >= 500 || res.status < 400) throw new Error(`${what}: expected a 4xx, got ${res.status} ${res.text.slice(0, 300)}`);
  expectEnvelope(res);
}

const STACK_FRAME = /\n\s+at |\s{4}at /;
const FILE_PATH = /\/work\/|node_modules|\.ts:\d+|\.js:\d+|node:internal/;

function expectNoStack(res: CallResult): void {
  for (const key of ['exc', 'exception'] as const) {
    const value = res.body?.[key];
    if (value === undefined) continue;
    expect(typeof value).toBe('string');
    expect(value).not.toMatch(STACK_FRAME);
    expect(value).not.toMatch(FILE_PATH);
  }
  expect(res.text).not.toMatch(FILE_PATH);
}

describe('the v1 error envelope', () => {
  it('a 417 carries exc_type, exception, exc (JSON list of strings) and _server_messages (JSON list of JSON message dicts)', async () => {
    const t = await widgetTenant();
    const res = await t.call('POST', '/api/resource/Widget', { json: {} });
    expectError(res, 417, 'MandatoryError');
    expect(res.body.exception).toMatch(/^frappe\.exceptions\.MandatoryError/);
    const exc = JSON.parse(res.body.exc) as string[];
    expect(exc.length).toBeGreaterThan(0);
    const outer = JSON.parse(res.body._server_messages) as string[];
    expect(outer).toHaveLength(1);
    const message = JSON.parse(outer[0]!) as Record<string, unknown>;
    expect(message).toMatchObject({ message: 'Error: Value missing for Widget: Title', indicator: 'red', raise_exception: 1 });
    expect(typeof message.title).toBe('string');
  });

  it('_server_messages uses Python\'s json.dumps separators (", " and ": ")', async () => {
    const t = await widgetTenant();
    const res = await t.call('POST', '/api/resource/Widget', { json: {} });
    const outer = JSON.parse(res.body._server_messages) as string[];
    expect(outer[0]).toContain('"message": "Error: Value missing for Widget: Title"');
  });

  it('a 409 DuplicateEntryError carries the same envelope', async () => {
    const t = await widgetTenant();
    await insert(t, 'Tag', { name: 'dup' });
    const res = await t.call('POST', '/api/resource/Tag', { json: { name: 'dup' } });
    expectError(res, 409, 'DuplicateEntryError');
    expect(serverMessages(res.body)).toEqual(['Tag dup already exists']);
  });
});

describe('unknown DocTypes and routes', () => {
  it.each([
    ['GET', '/api/resource/Nope'],
    ['POST', '/api/resource/Nope'],
    ['GET', '/api/resource/Nope/x'],
    ['PUT', '/api/resource/Nope/x'],
    ['DELETE', '/api/resource/Nope/x'],
    ['GET', '/api/v1/resource/Nope/x'],
  ])('%s %s answers 404 DoesNotExistError', async (method, url) => {
    const t = await widgetTenant();
    const res = await t.call(method, url, method === 'POST' || method === 'PUT' ? { json: { title: 'x' } } : {});
    expectError(res, 404, 'DoesNotExistError');
  });

  it('the 404 for an unknown DocType says "DocType Nope not found"', async () => {
    const t = await widgetTenant();
    const res = await t.call('GET', '/api/resource/Nope');
    expectError(res, 404, 'DoesNotExistError');
    expect(serverMessages(res.body)).toEqual(['DocType Nope not found']);
  });

  it('DocType names are case-sensitive: /api/resource/widget answers 404', async () => {
    const t = await widgetTenant();
    expectError(await t.call('GET', '/api/resource/widget'), 404, 'DoesNotExistError');
  });

  it('/api/resource without a DocType answers 404', async () => {
    const t = await widgetTenant();
    expect((await t.call('GET', '/api/resource')).status).toBe(404);
  });

  it('PATCH on a list or a document answers 405 and changes nothing', async () => {
    const t = await widgetTenant();
    const doc = await insert(t, 'Widget', { title: 'before' });
    expect((await t.call('PATCH', '/api/resource/Widget', { json: { title: 'x' } })).status).toBe(405);
    expect((await t.call('PATCH', `/api/resource/Widget/${doc.name}`, { json: { title: 'after' } })).status).toBe(405);
    expect((await t.call('PATCH', `/api/v1/resource/Widget/${doc.name}`, { json: { title: 'after' } })).status).toBe(405);
    expect(await fetchDoc(t, 'Widget', doc.name)).toEqual(doc);
  });
});

describe('no 5xx for client mistakes', () => {
  it('a SQL-looking name in the path answers 404, and the table is intact', async () => {
    const t = await widgetTenant();
    const doc = await insert(t, 'Widget', { title: 'survivor' });
    for (const name of [`'; drop table "tabWidget"; --`, `x' OR '1'='1`, `" OR ""="`, `\\`, `%`, `_`]) {
      expectError(await t.call('GET', path('Widget', name)), 404, 'DoesNotExistError');
      expectError(await t.call('PUT', path('Widget', name), { json: { title: 'x' } }), 404, 'DoesNotExistError');
      expectError(await t.call('DELETE', path('Widget', name)), 404, 'DoesNotExistError');
    }
    expect(await listNames(t, 'Widget')).toEqual([doc.name]);
  });

  it('a SQL-looking DocType in the path answers 404', async () => {
    const t = await widgetTenant();
    for (const dt of [`Widget'; drop table "tabWidget"; --`, 'Widget"', 'tabWidget', '../Widget', 'Widget;']) {
      expectError(await t.call('GET', path(dt)), 404, 'DoesNotExistError');
      expectError(await t.call('POST', path(dt), { json: { title: 'x' } }), 404, 'DoesNotExistError');
    }
    expect(await listNames(t, 'Widget')).toEqual([]);
  });

  it('a prompt name full of SQL and quotes is stored and read back verbatim', async () => {
    const t = await widgetTenant();
    const name = `'; drop table "tabTag"; -- \\ %_`;
    expect((await insert(t, 'Tag', { name, label: 'l' })).name).toBe(name);
    expect((await fetchDoc(t, 'Tag', name)).label).toBe('l');
    expect(await listNames(t, 'Tag')).toEqual([name]);
  });

  it('unicode names and values round-trip', async () => {
    const t = await widgetTenant();
    const name = 'Ünïcødé 名前 🚀 ع';
    const label = 'ß∂ƒ©˙∆˚¬… 😀 中文 עברית';
    await insert(t, 'Tag', { name, label });
    const got = await fetchDoc(t, 'Tag', name);
    expect(got).toMatchObject({ name, label });
  });

  it('a number or a very long text as the name in the path answers 404', async () => {
    const t = await widgetTenant();
    expectError(await t.call('GET', '/api/resource/Widget/12345'), 404, 'DoesNotExistError');
    expectError(await t.call('GET', '/api/resource/Widget/-1.5e308'), 404, 'DoesNotExistError');
    expectError(await t.call('GET', `/api/resource/Widget/${'n'.repeat(4000)}`), 404, 'DoesNotExistError');
  });

  it('a path that does not percent-decode answers 404', async () => {
    const t = await widgetTenant();
    expectClientError(await t.call('GET', '/api/resource/Widget/%E0%A4%A'), 'bad percent-encoding in a name');
    expectClientError(await t.call('GET', '/api/resource/%ZZ'), 'bad percent-encoding in a DocType');
  });

  it('a NUL byte in a value answers 4xx and writes nothing', async () => {
    const t = await widgetTenant();
    expectClientError(await t.call('POST', '/api/resource/Widget', { json: { title: 'a\u0000b' } }), 'NUL in a Data value');
    expectClientError(await t.call('POST', '/api/resource/Widget', { json: { title: 'ok', notes: '\u0000' } }), 'NUL in a Long Text value');
    expect(await listNames(t, 'Widget')).toEqual([]);
  });

  it('a NUL byte in the name of the path answers 404', async () => {
    const t = await widgetTenant();
    expectError(await t.call('GET', '/api/resource/Widget/a%00b'), 404, 'DoesNotExistError');
    expectError(await t.call('DELETE', '/api/resource/Widget/a%00b'), 404, 'DoesNotExistError');
  });

  it('a NUL byte in a prompt name answers 4xx and writes nothing', async () => {
    const t = await widgetTenant();
    expectClientError(await t.call('POST', '/api/resource/Tag', { json: { name: 'a\u0000b' } }), 'NUL in a name');
    expect(await listNames(t, 'Tag')).toEqual([]);
  });

  it.each([
    ['an Int of 1e308', { qty: 1e308 }],
    ['an Int of 30 digits', { qty: '9'.repeat(30) }],
    ['a Currency of 1e15', { price: 1e15 }],
    ['a Float of -1e300', { ratio: -1e300 }],
    ['a Data of 10,000 characters', { title: 'x'.repeat(10_000) }],
  ])('a huge value (%s) answers 417 and writes nothing', async (_what, body) => {
    const t = await widgetTenant();
    const res = await t.call('POST', '/api/resource/Widget', { json: { title: 'ok', ...body } });
    expect(res.status).toBe(417);
    expectEnvelope(res);
    expect(await listNames(t, 'Widget')).toEqual([]);
  });

  it('a large text in a Long Text field is stored whole', async () => {
    const t = await widgetTenant();
    const notes = 'lorem ipsum '.repeat(40_000);
    const doc = await insert(t, 'Widget', { title: 'big', notes });
    expect((await fetchDoc(t, 'Widget', doc.name)).notes).toBe(notes);
  });

  it('a body over the size limit answers 413 and writes nothing', async () => {
    const t = await widgetTenant();
    const res = await t.call('POST', '/api/resource/Widget', { json: { title: 'big', notes: 'x'.repeat(2 * 1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(await listNames(t, 'Widget')).toEqual([]);
  });

  it.each([
    ['an object in a Data field', { title: { a: 1 } }],
    ['a list in a Data field', { title: ['a', 'b'] }],
    ['an object in an Int field', { title: 'ok', qty: { n: 1 } }],
    ['a list in an Int field', { title: 'ok', qty: [1] }],
    ['a list in a Check field', { title: 'ok', active: [1] }],
    ['an object in a Currency field', { title: 'ok', price: { amount: 1 } }],
    ['an object in a Date field', { title: 'ok', due: { y: 2025 } }],
    ['a boolean in a Date field', { title: 'ok', due: true }],
    ['a number in a Datetime field', { title: 'ok', at: 1700000000 }],
    ['a list in a Select field', { title: 'ok', colour: ['Red'] }],
    ['an object in a Link field', { title: 'ok', keeper: { name: 'Administrator' } }],
    ['an object as docstatus', { title: 'ok', docstatus: { v: 1 } }],
  ])('%s answers 417 ValidationError and writes nothing', async (_what, body) => {
    const t = await widgetTenant();
    const res = await t.call('POST', '/api/resource/Widget', { json: body });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Widget')).toEqual([]);
  });

  it('an object in a field of a PUT answers 417 and changes nothing', async () => {
    const t = await widgetTenant();
    const doc = await insert(t, 'Widget', { title: 'before' });
    expectError(await t.call('PUT', `/api/resource/Widget/${doc.name}`, { json: { title: { x: 1 } } }), 417, 'ValidationError');
    expect(await fetchDoc(t, 'Widget', doc.name)).toEqual(doc);
  });

  it.each([
    ['an object', { first: 'x' }],
    ['a list', ['x']],
    ['a boolean', true],
  ])('%s as a prompt name answers 4xx and writes nothing', async (_what, name) => {
    const t = await widgetTenant();
    expectClientError(await t.call('POST', '/api/resource/Tag', { json: { name } }), 'a non-scalar name');
    expect(await listNames(t, 'Tag')).toEqual([]);
  });

  it.each([
    ['an object', (m: string) => ({ at: m })],
    ['a one-element list', (m: string) => [m]],
  ])('%s holding the current modified is not that text: 417 TimestampMismatchError, nothing changes', async (_what, wrap) => {
    const t = await widgetTenant();
    const doc = await insert(t, 'Widget', { title: 'before' });
    const res = await t.call('PUT', `/api/resource/Widget/${doc.name}`, { json: { title: 'after', modified: wrap(doc.modified) } });
    expectError(res, 417, 'TimestampMismatchError');
    expect(await fetchDoc(t, 'Widget', doc.name)).toEqual(doc);
  });

  it('prototype-polluting keys in a body are harmless', async () => {
    const t = await widgetTenant();
    const body = '{"title":"proto","__proto__":{"qty":5,"isAdmin":true},"constructor":{"prototype":{"x":1}}}';
    const res = await t.call('POST', '/api/resource/Widget', { body, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.body.data.title).toBe('proto');
    expect(res.body.data.qty).toBe(0);
    expect(res.body.data).not.toHaveProperty('isAdmin');
  });

  it('an unsupported body charset answers 4xx and writes nothing', async () => {
    const t = await widgetTenant();
    const res = await t.call('POST', '/api/resource/Widget', {
      body: JSON.stringify({ title: 'x' }),
      headers: { 'Content-Type': 'application/json; charset=klingon' },
    });
    expectClientError(res, 'unknown charset');
    expect(await listNames(t, 'Widget')).toEqual([]);
  });

  it('a deeply nested JSON body answers 4xx, not 5xx', async () => {
    const t = await widgetTenant();
    const body = `{"title":"deep","notes":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    expectClientError(await t.call('POST', '/api/resource/Widget', { body, headers: { 'Content-Type': 'application/json' } }), 'deep nesting');
    expect(await listNames(t, 'Widget')).toEqual([]);
  });
});

describe('production mode', () => {
  it('a 417 in production carries exc_type and exc but no stack trace or file path', async () => {
    const t = await widgetTenant(production);
    const res = await t.call('POST', '/api/resource/Widget', { json: { qty: 'abc', title: 'x' } });
    expectError(res, 417, 'ValidationError');
    expectNoStack(res);
    expect(serverMessages(res.body)).toHaveLength(1);
  });

  it('a 404 in production carries no stack trace or file path', async () => {
    const t = await widgetTenant(production);
    const missingDoc = await t.call('GET', '/api/resource/Widget/nosuch');
    expectError(missingDoc, 404, 'DoesNotExistError');
    expectNoStack(missingDoc);
    const missingType = await t.call('GET', '/api/resource/Nope');
    expectError(missingType, 404, 'DoesNotExistError');
    expectNoStack(missingType);
  });

  it('a 409 in production carries no stack trace or file path', async () => {
    const t = await widgetTenant(production);
    await insert(t, 'Tag', { name: 'dup' });
    const res = await t.call('POST', '/api/resource/Tag', { json: { name: 'dup' } });
    expectError(res, 409, 'DuplicateEntryError');
    expectNoStack(res);
  });

  it('a failure inside Postgres (a NUL byte) leaks neither a stack nor database text in production', async () => {
    const t = await widgetTenant(production);
    const res = await t.call('POST', '/api/resource/Widget', { json: { title: 'a\u0000b' } });
    expectNoStack(res);
    expect(res.text).not.toMatch(/invalid byte sequence|UTF8|0x00/);
  });
});
