import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocType, createRole, createUser, expectError, expectOk, issueKeys, type TestUser } from '../platform/helpers';
import { DOSSIER } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { asResult, download, pathsOnDisk, upload } from './helpers';

/**
 * Attaching files to documents and who may download private files: the uploader, System
 * Manager, and whoever may read the document the file is attached to; never Guest, never others.
 */

let server: TestServer;
let t: TestTenant;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let manager: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('acl');
  await createRole(t, 'Author');
  await createRole(t, 'Reader');
  await createDocType(t, DOSSIER);
  alice = await createUser(server, t, 'alice@example.com', ['Author']);
  bob = await createUser(server, t, 'bob@example.com', ['Author']);
  carol = await createUser(server, t, 'carol@example.com', ['Reader']);
  manager = await createUser(server, t, 'manager@example.com', ['System Manager']);
});
afterAll(() => server.close());

async function dossier(owner: TestUser, title: string): Promise<string> {
  const res = await t.call('POST', '/api/resource/Dossier', { json: { title }, auth: owner.auth });
  expectOk(res);
  return String(res.body.data.name);
}

describe('attaching', () => {
  it('attaches to a document the caller may write and sets its Attach field', async () => {
    const d = await dossier(alice, 'mine');
    const res = await upload(server.url, t, 'scan bytes', 'scan.pdf', {
      auth: alice.auth,
      fields: { is_private: '1', doctype: 'Dossier', docname: d, fieldname: 'scan' },
    });
    expectOk(res);
    expect(res.body.message).toMatchObject({
      owner: alice.email,
      attached_to_doctype: 'Dossier',
      attached_to_name: d,
      attached_to_field: 'scan',
      file_url: '/private/files/scan.pdf',
      folder: 'Home',
    });
    const doc = await t.call('GET', `/api/resource/Dossier/${d}`, { auth: alice.auth });
    expect(doc.body.data.scan).toBe('/private/files/scan.pdf');
    const listed = await t.call('GET', '/api/resource/File', {
      auth: alice.auth,
      query: { filters: JSON.stringify({ attached_to_doctype: 'Dossier', attached_to_name: d }), fields: '["file_url"]' },
    });
    expect(listed.body.data).toEqual([{ file_url: '/private/files/scan.pdf' }]);
  });

  it('a fieldname that is not an Attach field of the document is recorded but sets nothing', async () => {
    const d = await dossier(alice, 'title stays');
    const res = await upload(server.url, t, 'x1', 'x1.txt', { auth: alice.auth, fields: { doctype: 'Dossier', docname: d, fieldname: 'title' } });
    expectOk(res);
    const doc = await t.call('GET', `/api/resource/Dossier/${d}`, { auth: alice.auth });
    expect(doc.body.data.title).toBe('title stays');
  });

  it("refuses to attach to another user's document, a missing one, or a missing DocType", async () => {
    const d = await dossier(alice, 'not bobs');
    expectError(
      await upload(server.url, t, 'b', 'bob.txt', { auth: bob.auth, fields: { doctype: 'Dossier', docname: d, fieldname: 'scan' } }),
      403,
      'PermissionError',
    );
    expectError(await upload(server.url, t, 'b', 'bob.txt', { auth: bob.auth, fields: { doctype: 'Dossier', docname: 'nope' } }), 404, 'DoesNotExistError');
    expectError(await upload(server.url, t, 'b', 'bob.txt', { auth: bob.auth, fields: { doctype: 'No Such Type', docname: 'x' } }), 417, 'LinkValidationError');
    // nothing was stored for the refused uploads
    expect(pathsOnDisk(t.schema, false, 'bob.txt')).toHaveLength(0);
    const doc = await t.call('GET', `/api/resource/Dossier/${d}`);
    expect(doc.body.data.scan).toBeUndefined();
    // the same through the record API
    const direct = await t.call('POST', '/api/resource/File', {
      auth: bob.auth,
      json: { file_url: 'https://example.com/x.png', attached_to_doctype: 'Dossier', attached_to_name: d },
    });
    expectError(direct, 403, 'PermissionError');
  });
});

describe('private files', () => {
  let d: string;
  let attachedUrl: string;
  let looseUrl: string;
  const attachedBytes = 'attached private bytes';
  beforeAll(async () => {
    d = await dossier(alice, 'private stuff');
    const a = await upload(server.url, t, attachedBytes, 'contract.txt', { auth: alice.auth, fields: { is_private: '1', doctype: 'Dossier', docname: d } });
    expectOk(a);
    attachedUrl = a.body.message.file_url;
    const b = await upload(server.url, t, 'loose private bytes', 'diary.txt', { auth: alice.auth, fields: { is_private: '1' } });
    expectOk(b);
    looseUrl = b.body.message.file_url;
  });

  it('the uploader and System Manager may download them', async () => {
    for (const who of [alice.auth, manager.auth, t.auth]) {
      const got = await download(server.url, t, attachedUrl, who);
      expect(got.status).toBe(200);
      expect(got.bytes.toString()).toBe(attachedBytes);
      expect(got.headers.get('cache-control')).toMatch(/^private/);
    }
    expect((await download(server.url, t, looseUrl, alice.auth)).status).toBe(200);
  });

  it('whoever may read the attached-to document may download', async () => {
    const got = await download(server.url, t, attachedUrl, carol.auth);
    expect(got.status).toBe(200);
    expect(got.bytes.toString()).toBe(attachedBytes);
    expectError(asResult(await download(server.url, t, looseUrl, carol.auth)), 403, 'PermissionError');
  });

  it('other users and Guest get 403 in the envelope; a missing file is 404', async () => {
    for (const url of [attachedUrl, looseUrl]) {
      expectError(asResult(await download(server.url, t, url, bob.auth)), 403, 'PermissionError');
      expectError(asResult(await download(server.url, t, url, null)), 403, 'PermissionError');
    }
    expectError(asResult(await download(server.url, t, '/private/files/no-such-file.txt', alice.auth)), 404, 'DoesNotExistError');
    expectError(asResult(await download(server.url, t, '/files/contract.txt', alice.auth)), 404, 'DoesNotExistError');
  });

  it('another user cannot reach a private file by linking its URL or naming its File', async () => {
    expectError(await upload(server.url, t, undefined, '', { auth: bob.auth, fields: { file_url: looseUrl, is_private: '1' } }), 403, 'PermissionError');
    const direct = await t.call('POST', '/api/resource/File', { auth: bob.auth, json: { file_url: looseUrl, is_private: 1 } });
    expectError(direct, 403, 'PermissionError');
    const fileName = (await t.call('GET', '/api/resource/File', { auth: alice.auth, query: { filters: JSON.stringify({ file_url: looseUrl }) } })).body.data[0]
      .name;
    expectError(await upload(server.url, t, undefined, '', { auth: bob.auth, fields: { library_file_name: fileName } }), 403, 'PermissionError');
    expectError(await t.call('GET', `/api/resource/File/${fileName}`, { auth: bob.auth }), 403, 'PermissionError');
    const bobs = await t.call('GET', '/api/resource/File', { auth: bob.auth, query: { filters: JSON.stringify({ file_url: looseUrl }) } });
    expect(bobs.body.data).toEqual([]);
    // the stored location cannot be changed by a save either
    const moved = await t.call('PUT', `/api/resource/File/${fileName}`, { auth: alice.auth, json: { file_url: '/files/diary.txt' } });
    expectError(moved, 417, 'ValidationError');
  });

  it('the same bytes uploaded by two users share storage but each may download through their own File', async () => {
    const a = await upload(server.url, t, 'common private', 'common.txt', { auth: alice.auth, fields: { is_private: '1' } });
    const b = await upload(server.url, t, 'common private', 'common.txt', { auth: bob.auth, fields: { is_private: '1' } });
    expect(b.body.message.file_url).toBe(a.body.message.file_url);
    expect((await download(server.url, t, a.body.message.file_url, bob.auth)).status).toBe(200);
    expect((await download(server.url, t, a.body.message.file_url, carol.auth)).status).toBe(403);
    // bob deletes his File: alice's bytes stay
    expectOk(await t.call('DELETE', `/api/resource/File/${b.body.message.name}`, { auth: bob.auth }), 202);
    expect((await download(server.url, t, a.body.message.file_url, alice.auth)).bytes.toString()).toBe('common private');
    expect((await download(server.url, t, a.body.message.file_url, bob.auth)).status).toBe(403);
    // and bob cannot delete alice's
    expectError(await t.call('DELETE', `/api/resource/File/${a.body.message.name}`, { auth: bob.auth }), 403, 'PermissionError');
  });
});

describe('website users', () => {
  it('may upload only the documents Frappe allows them', async () => {
    const email = 'web@example.com';
    expectOk(await t.call('POST', '/api/resource/User', { json: { email, first_name: 'Web', user_type: 'Website User' } }));
    const keys = await issueKeys(server, t, email);
    const auth = `token ${keys.api_key}:${keys.api_secret}`;
    const refused = await upload(server.url, t, '<h1>x</h1>', 'page.html', { auth });
    expectError(refused, 417, 'ValidationError');
    expect(refused.text).toContain('You can only upload JPG, PNG, PDF, TXT, CSV or Microsoft documents.');
    expectOk(await upload(server.url, t, 'png-ish', 'pic.png', { auth }));
  });
});
