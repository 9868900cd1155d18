import { afterAll, beforeAll, it } from 'vitest';
import { startTestServer, type TestServer } from '../../support/server';
import { createDoctype } from '../helpers';
let server: TestServer;
beforeAll(async () => { server = await startTestServer(); });
afterAll(() => server.close());
it('probe', async () => {
  const t = await server.tenant();
  await createDoctype(t, { name: 'S', issingle: 1, fields: [
      { fieldname: 'shop_name', fieldtype: 'Data', default: 'My Shop' },
      { fieldname: 'max_items', fieldtype: 'Int', default: '10' },
      { fieldname: 'enabled', fieldtype: 'Check', default: '1' },
      { fieldname: 'currency', fieldtype: 'Select', options: 'EUR\nUSD' }]});
  console.log('SGET', (await t.call('GET', '/api/resource/S/S')).text);
  console.log('SPUT', (await t.call('PUT', '/api/resource/S/S', {json: {}})).text);
  console.log('SLIST', (await t.call('GET', '/api/resource/S')).text.slice(0,200));
  const r = await t.call('POST', '/api/resource/ToDo', { json: { description: 'a\u0000b' } }); console.log('NUL value', r.status, r.text.slice(0,200));
  const g = await t.call('GET', '/api/resource/ToDo/a%00b'); console.log('NUL name', g.status, g.text.slice(0,200));
  const h = await t.call('GET', '/api/resource/ToDo', {query: {filters: '[["name","=","a\u0000b"]]'}}); console.log('NUL filter', h.status, h.text.slice(0,200));
});
