import type { FrappeApp } from 'frappe-js-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../platform/helpers';
import { sdkFor } from '../support/frappe-js-sdk';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { mint } from './helpers';

/** The real npm frappe-js-sdk with an OAuth access token (`type: 'Bearer'`), as third-party apps use it. */

let server: TestServer;
let t: TestTenant;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('oauthsdk');
});
afterAll(() => server.close());

function sdk(accessToken: string): FrappeApp {
  return sdkFor(server.url, t.name, accessToken, 'Bearer');
}

describe('frappe-js-sdk with a Bearer token', () => {
  it('lists ToDos with an `all` token, and creates one', async () => {
    expectOk(await t.call('POST', '/api/resource/ToDo', { json: { description: 'seen through the sdk' } }));
    const db = sdk(await mint(server, t)).db();
    const rows = await db.getDocList('ToDo', { fields: ['name', 'description'], limit: 100 });
    expect(rows.map((r: { description: string }) => r.description)).toContain('seen through the sdk');
    const created = await db.createDoc('ToDo', { description: 'made by the sdk' });
    expect(created.owner).toBe('Administrator');
    expect(await db.getCount('ToDo')).toBeGreaterThanOrEqual(2);
  });

  it('lists with a todo:read token, is refused a write (403), and gets the logged-in user', async () => {
    const app = sdk(await mint(server, t, { claims: { scope: 'openid todo:read' } }));
    const rows = await app.db().getDocList('ToDo', { fields: ['name'] });
    expect(rows.length).toBeGreaterThan(0);
    await expect(app.db().createDoc('ToDo', { description: 'not allowed' })).rejects.toMatchObject({ httpStatus: 403, exc_type: 'PermissionError' });
    expect(await app.auth().getLoggedInUser()).toBe('Administrator');
  });

  it('is refused (401) with a token of another tenant', async () => {
    const other = await server.tenant('oauthsdkb');
    const app = sdk(await mint(server, other));
    await expect(app.db().getDocList('ToDo')).rejects.toMatchObject({ httpStatus: 401, exc_type: 'AuthenticationError' });
  });
});
