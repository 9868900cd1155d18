import { afterAll, beforeAll, it } from 'vitest';
import { startTestServer, type TestServer } from '/work/main/tests/support/server';
let server: TestServer;
beforeAll(async () => { server = await startTestServer(); });
afterAll(() => server.close());
it('probe', async () => {
  const t = await server.tenant();
  const r = await t.call('POST', '/api/resource/ToDo', { json: { description: 'x' } });
  const n = r.body.data.name;
  for (const p of [`/api/resource/ToDo/${n}/`, `/api/resource/ToDo/${n}//`]) {
    const g = await t.call('GET', p); console.log(p, g.status, g.text.slice(0, 300));
  }
});
