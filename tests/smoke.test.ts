import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('smoke', () => {
  it('creates and lists a ToDo', async () => {
    const t = await server.tenant();
    const created = await t.call('POST', '/api/resource/ToDo', { json: { description: 'hello' } });
    expect(created.status).toBe(200);
    const list = await t.call('GET', '/api/resource/ToDo', { query: { fields: '["name","description"]' } });
    expect(list.body.data).toEqual([{ name: created.body.data.name, description: 'hello' }]);
  });
});
