import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, rawRequest } from '../platform/helpers';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { download, upload } from './helpers';

/** Each tenant's files are its own: same names never collide, and no path reaches another folder. */

let server: TestServer;
let a: TestTenant;
let b: TestTenant;
beforeAll(async () => {
  server = await startTestServer();
  a = await server.tenant('fa');
  b = await server.tenant('fb');
  expectOk(await upload(server.url, a, 'A public', 'same.txt'));
  expectOk(await upload(server.url, a, 'A private', 'secret.txt', { fields: { is_private: '1' } }));
});
afterAll(() => server.close());

describe('tenant isolation', () => {
  it("a tenant's file is not reachable from another tenant under the same name", async () => {
    expect((await download(server.url, a, '/files/same.txt', null)).bytes.toString()).toBe('A public');
    const fromB = await download(server.url, b, '/files/same.txt', null);
    expect(fromB.status).toBe(404);
    expect(fromB.body.exc_type).toBe('DoesNotExistError');
    expect((await download(server.url, b, '/private/files/secret.txt', b.auth)).status).toBe(404);
    // A's credentials do not work on B
    expect((await download(server.url, b, '/private/files/secret.txt', a.auth)).status).toBe(401);
  });

  it('the same name in two tenants is two files', async () => {
    const res = await upload(server.url, b, 'B public', 'same.txt');
    expectOk(res);
    expect(res.body.message.file_url).toBe('/files/same.txt');
    expect((await download(server.url, a, '/files/same.txt', null)).bytes.toString()).toBe('A public');
    expect((await download(server.url, b, '/files/same.txt', null)).bytes.toString()).toBe('B public');
  });

  it("linking another tenant's URL links nothing", async () => {
    const res = await upload(server.url, b, undefined, '', { fields: { file_url: '/private/files/secret.txt' } });
    expect(res.status).toBe(417);
  });
});

describe('path traversal', () => {
  const hostile = (schema: string) => [
    '/files/../files/same.txt',
    '/files/./same.txt',
    `/files/..%2F..%2F${schema}%2Fpublic%2Ffiles%2Fsame.txt`,
    `/files/%2e%2e/%2e%2e/${schema}/public/files/same.txt`,
    `/files/%2E%2E%2F%2E%2E%2F${schema}%2Fprivate%2Ffiles%2Fsecret.txt`,
    '/private/files/..%2F..%2Fpublic%2Ffiles%2Fsame.txt',
    '/private/files/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
    '/files/..%5C..%5Cwin.ini',
    '/files/%2e%2e',
    '/files/..',
    '/files/.',
    '/files/',
    '/files/%00',
    '/files/same.txt%00.png',
    '/files/%E0%A4%A',
    '/files//etc/passwd',
    '/files/%252e%252e%252fsame.txt',
  ];

  it('no encoding of .. or / escapes the tenant folder (raw requests)', async () => {
    for (const path of hostile(a.schema)) {
      for (const site of [a.name, b.name]) {
        const res = await rawRequest(server.port, 'GET', path, {
          Host: '127.0.0.1',
          'X-Frappe-Site-Name': site,
          Authorization: site === a.name ? a.auth : b.auth,
        });
        expect({ path, site, status: res.status }).toEqual({ path, site, status: 404 });
        expect(res.body?.exc_type).toBe('DoesNotExistError');
      }
    }
  });

  it('a file name that does percent-decode to a stored name is served', async () => {
    const res = await rawRequest(server.port, 'GET', '/files/%73ame.txt', { Host: '127.0.0.1', 'X-Frappe-Site-Name': a.name });
    expect(res.status).toBe(200);
    expect(res.text).toBe('A public');
  });
});
