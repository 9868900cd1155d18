import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectOk } from '../platform/helpers';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { download, pathsOnDisk, randomBytes, upload } from './helpers';

/** upload_file over raw multipart (FormData + fetch), files served back, de-duplication, deletion. */

let server: TestServer;
let t: TestTenant;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('files');
});
afterAll(() => server.close());

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');

describe('upload_file (raw multipart)', () => {
  it('saves a public file and answers the File document with nulls included', async () => {
    const res = await upload(server.url, t, 'hello, world\n', 'hello.txt', { contentType: 'text/plain' });
    expectOk(res);
    const file = res.body.message;
    expect(file).toMatchObject({
      doctype: 'File',
      file_name: 'hello.txt',
      file_url: '/files/hello.txt',
      is_private: 0,
      file_size: 13,
      file_type: 'TXT',
      content_hash: md5('hello, world\n'),
      folder: 'Home',
      is_folder: 0,
      attached_to_doctype: null,
      attached_to_name: null,
      attached_to_field: null,
      owner: 'Administrator',
      docstatus: 0,
    });
    expect(file.name).toMatch(/^[0-9a-v]{10}$/);
    expect(pathsOnDisk(t.schema, false, 'hello.txt')).toHaveLength(1);

    const got = await download(server.url, t, '/files/hello.txt', null);
    expect(got.status).toBe(200);
    expect(got.bytes.toString('utf8')).toBe('hello, world\n');
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(got.headers.get('content-length')).toBe('13');
    expect(got.headers.get('cache-control')).toMatch(/^public/);
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');

    const head = await fetch(new URL('/files/hello.txt', server.url), { method: 'HEAD', headers: { 'X-Frappe-Site-Name': t.name } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('13');
    expect(await head.text()).toBe('');
  });

  it('the File is a document like any other', async () => {
    const res = await upload(server.url, t, 'doc', 'doc.txt');
    expectOk(res);
    const read = await t.call('GET', `/api/resource/File/${res.body.message.name}`);
    expectOk(read);
    expect(read.body.data).toMatchObject({ file_url: '/files/doc.txt', file_size: 3, folder: 'Home' });
    const home = await t.call('GET', '/api/resource/File/Home');
    expect(home.body.data).toMatchObject({ is_folder: 1, is_home_folder: 1, file_name: 'Home' });
    expectError(await t.call('DELETE', '/api/resource/File/Home'), 417, 'LinkExistsError');
  });

  it('round-trips binary content byte for byte, public and private', async () => {
    const bytes = randomBytes(200_000);
    for (const isPrivate of [false, true]) {
      const name = `blob-${isPrivate ? 'p' : 'q'}.bin`;
      const res = await upload(server.url, t, bytes, name, { fields: { is_private: isPrivate ? '1' : '0' } });
      expectOk(res);
      expect(res.body.message.file_url).toBe(isPrivate ? `/private/files/${name}` : `/files/${name}`);
      expect(res.body.message.is_private).toBe(isPrivate ? 1 : 0);
      expect(res.body.message.file_size).toBe(bytes.length);
      const got = await download(server.url, t, res.body.message.file_url);
      expect(got.status).toBe(200);
      expect(Buffer.compare(got.bytes, Buffer.from(bytes))).toBe(0);
      expect(got.headers.get('content-type')).toBe('application/octet-stream');
      expect(got.headers.get('etag')).toBe(`"${md5(bytes)}"`);
      const again = await download(server.url, t, res.body.message.file_url, t.auth, { 'If-None-Match': `"${md5(bytes)}"` });
      expect(again.status).toBe(304);
    }
  });

  it('accepts is_private as true, and file_name, folder and the legacy cmd form', async () => {
    const res = await upload(server.url, t, 'x', 'ignored.txt', { fields: { is_private: 'true', file_name: 'chosen.txt' } });
    expectOk(res);
    expect(res.body.message).toMatchObject({ file_name: 'chosen.txt', file_url: '/private/files/chosen.txt', is_private: 1 });
    const legacy = await upload(server.url, t, 'legacy', 'legacy.txt', { path: '/', fields: { cmd: 'upload_file' } });
    expectOk(legacy);
    expect(legacy.body.message.file_url).toBe('/files/legacy.txt');
  });

  it('de-duplicates: same bytes share a URL, a different file under a taken name gets a hash suffix', async () => {
    const a = await upload(server.url, t, 'alpha', 'dup.txt');
    const b = await upload(server.url, t, 'alpha', 'dup.txt');
    const c = await upload(server.url, t, 'alpha', 'other-name.txt');
    const d = await upload(server.url, t, 'beta', 'dup.txt');
    for (const r of [a, b, c, d]) expectOk(r);
    expect(b.body.message.file_url).toBe('/files/dup.txt');
    expect(b.body.message.name).not.toBe(a.body.message.name);
    expect(c.body.message).toMatchObject({ file_name: 'other-name.txt', file_url: '/files/dup.txt' });
    expect(d.body.message.file_url).toBe(`/files/dup${md5('beta').slice(-6)}.txt`);
    expect((await download(server.url, t, d.body.message.file_url)).bytes.toString()).toBe('beta');
    expect((await download(server.url, t, '/files/dup.txt')).bytes.toString()).toBe('alpha');
    // the same bytes, private, are stored separately
    const p = await upload(server.url, t, 'alpha', 'dup.txt', { fields: { is_private: '1' } });
    expect(p.body.message.file_url).toBe('/private/files/dup.txt');
  });

  it('deleting a File removes the bytes once no other File uses them', async () => {
    const a = await upload(server.url, t, 'shared bytes', 'gone.txt');
    const b = await upload(server.url, t, 'shared bytes', 'gone.txt');
    expect(b.body.message.file_url).toBe('/files/gone.txt');
    expect(pathsOnDisk(t.schema, false, 'gone.txt')).toHaveLength(1);

    expectOk(await t.call('DELETE', `/api/resource/File/${a.body.message.name}`), 202);
    expect(pathsOnDisk(t.schema, false, 'gone.txt')).toHaveLength(1);
    expect((await download(server.url, t, '/files/gone.txt')).status).toBe(200);

    expectOk(await t.call('POST', '/api/method/frappe.client.delete', { json: { doctype: 'File', name: b.body.message.name } }));
    expect(pathsOnDisk(t.schema, false, 'gone.txt')).toHaveLength(0);
    const after = await download(server.url, t, '/files/gone.txt');
    expect(after.status).toBe(404);
    expect(after.body.exc_type).toBe('DoesNotExistError');

    // the name is free again, for different bytes
    const c = await upload(server.url, t, 'new bytes', 'gone.txt');
    expect(c.body.message.file_url).toBe('/files/gone.txt');
    expect((await download(server.url, t, '/files/gone.txt')).bytes.toString()).toBe('new bytes');
  });

  it('links an existing URL or a remote one without bytes, and reuses a library file', async () => {
    const original = await upload(server.url, t, 'library', 'lib.txt');
    const link = await upload(server.url, t, undefined, '', { fields: { file_url: '/files/lib.txt' } });
    expectOk(link);
    expect(link.body.message).toMatchObject({ file_url: '/files/lib.txt', file_name: 'lib.txt', content_hash: md5('library'), file_size: 7 });
    const lib = await upload(server.url, t, undefined, '', { fields: { library_file_name: original.body.message.name } });
    expectOk(lib);
    expect(lib.body.message).toMatchObject({ file_url: '/files/lib.txt', file_name: 'lib.txt' });
    const remote = await upload(server.url, t, undefined, '', { fields: { file_url: 'https://example.com/some/report%20v2.pdf' } });
    expectOk(remote);
    expect(remote.body.message).toMatchObject({
      file_url: 'https://example.com/some/report%20v2.pdf',
      file_name: 'report v2.pdf',
      is_private: 0,
      file_type: 'PDF',
      content_hash: null,
    });
    expectError(await upload(server.url, t, undefined, '', { fields: { file_url: '/files/nope.txt' } }), 417, 'ValidationError');
    expectError(await upload(server.url, t, undefined, '', { fields: { file_url: 'javascript:alert(1)' } }), 417, 'ValidationError');
    expectError(await upload(server.url, t, undefined, '', {}), 417, 'ValidationError');
  });

  it('is POST only and refuses Guest', async () => {
    expectError(await upload(server.url, t, 'x', 'x.txt', { auth: null }), 403, 'PermissionError');
    const get = await t.call('GET', '/api/method/upload_file');
    expectError(get, 403, 'PermissionError');
  });
});

describe('hostile file names', () => {
  const cases: Array<[string, string]> = [
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\win.ini', 'win.ini'],
    ['C:\\fakepath\\photo.png', 'photo.png'],
    ['..', 'file'],
    ['.\u0000.', '_'],
    ['...hidden', 'hidden'],
    ['a\u0000b.txt', 'a_b.txt'],
    ['what?is#this%20.txt', 'what_is_this_20.txt'],
    ['<script>.html', '_script_.html'],
    [`${'x'.repeat(300)}.txt`, `${'x'.repeat(116)}.txt`],
  ];
  for (const [sent, stored] of cases) {
    it(`${JSON.stringify(sent.slice(0, 40))} is stored as ${JSON.stringify(stored.slice(0, 40))}`, async () => {
      const res = await upload(server.url, t, `content of ${sent}`, 'ignored', { fields: { file_name: sent } });
      expectOk(res);
      expect(res.body.message.file_name).toBe(stored);
      expect(res.body.message.file_url).toBe(`/files/${stored}`);
      expect(pathsOnDisk(t.schema, false, stored)).toHaveLength(1);
      const got = await download(server.url, t, `/files/${encodeURIComponent(stored)}`);
      expect(got.status).toBe(200);
      expect(got.bytes.toString('utf8')).toBe(`content of ${sent}`);
    });
  }

  it('a multipart filename with path parts keeps only its last part', async () => {
    const res = await upload(server.url, t, 'traversal', '../../../tmp/evil.txt');
    expectOk(res);
    expect(res.body.message.file_url).toBe('/files/evil.txt');
  });

  it('scriptable files are served as downloads', async () => {
    const res = await upload(server.url, t, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'x.svg');
    expectOk(res);
    const got = await download(server.url, t, '/files/x.svg', null);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/svg+xml');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="x.svg"/);
    expect(got.headers.get('content-security-policy')).toContain('sandbox');
  });
});

describe('size limit', () => {
  let small: TestServer;
  let s: TestTenant;
  beforeAll(async () => {
    small = await startTestServer({ maxFileSize: 1024 });
    s = await small.tenant('small');
  });
  afterAll(() => small.close());

  it('a file over max_file_size is a 413 in the envelope, and nothing is stored', async () => {
    const res = await upload(small.url, s, randomBytes(5000), 'big.bin');
    expect(res.status).toBe(413);
    expect(res.body.exc_type).toBe('RequestEntityTooLarge');
    expect(JSON.parse(JSON.parse(res.body._server_messages)[0]).message).toMatch(/1024/);
    expect(pathsOnDisk(s.schema, false, 'big.bin')).toHaveLength(0);
    const count = await s.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'File', filters: JSON.stringify({ is_folder: 0 }) } });
    expect(count.body.message).toBe(0);
  });

  it('a file under the limit is accepted', async () => {
    const res = await upload(small.url, s, randomBytes(1000), 'fits.bin');
    expectOk(res);
    expect(res.body.message.file_size).toBe(1000);
  });
});
