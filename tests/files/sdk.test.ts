import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocType, createRole, createUser, type TestUser } from '../platform/helpers';
import { PROFILE_CARD } from '../support/doctypes';
import { sdkFor } from '../support/frappe-js-sdk';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { download, randomBytes } from './helpers';

/** The real npm frappe-js-sdk's file.uploadFile against Quire (Node 20's global File and FormData). */

let server: TestServer;
let t: TestTenant;
let writer: TestUser;
let outsider: TestUser;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('sdkfiles');
  await createRole(t, 'Writer');
  await createDocType(t, PROFILE_CARD);
  writer = await createUser(server, t, 'writer@example.com', ['Writer']);
  outsider = await createUser(server, t, 'outsider@example.com', ['Writer']);
});
afterAll(() => server.close());

function sdk(token: string) {
  return sdkFor(server.url, t.name, token);
}

const tokenOf = (u: TestUser) => `${u.api_key}:${u.api_secret}`;

describe('frappe-js-sdk file.uploadFile', () => {
  it('uploads a public file attached to a document and sets its Attach Image field', async () => {
    const app = sdk(tokenOf(writer));
    const card = await app.db().createDoc('Profile Card', { title: 'me' });
    const png = randomBytes(4096);
    const res = await app.file().uploadFile(new File([png], 'avatar.png', { type: 'image/png' }), {
      isPrivate: false,
      doctype: 'Profile Card',
      docname: card.name,
      fieldname: 'avatar',
    });
    expect(res.status).toBe(200);
    const file = res.data.message;
    expect(file).toMatchObject({
      doctype: 'File',
      file_name: 'avatar.png',
      file_url: '/files/avatar.png',
      is_private: 0,
      file_size: 4096,
      file_type: 'PNG',
      attached_to_doctype: 'Profile Card',
      attached_to_name: card.name,
      attached_to_field: 'avatar',
      owner: writer.email,
    });
    const updated = await app.db().getDoc('Profile Card', card.name);
    expect(updated.avatar).toBe('/files/avatar.png');

    const got = await download(server.url, t, file.file_url, null);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(Buffer.compare(got.bytes, Buffer.from(png))).toBe(0);
  });

  it('uploads a private file with a folder and extra data; only its owner can download it', async () => {
    const res = await sdk(tokenOf(writer))
      .file()
      .uploadFile(new File(['private notes'], 'notes.txt', { type: 'text/plain' }), {
        isPrivate: true,
        folder: 'Home',
        otherData: { optimize: '0' },
      });
    const file = res.data.message;
    expect(file).toMatchObject({ file_url: '/private/files/notes.txt', is_private: 1, folder: 'Home', attached_to_doctype: null });
    const mine = await download(server.url, t, file.file_url, writer.auth);
    expect(mine.bytes.toString()).toBe('private notes');
    expect((await download(server.url, t, file.file_url, outsider.auth)).status).toBe(403);
  });

  it('rejects with FrappeError when the caller may not attach', async () => {
    const card = await sdk(tokenOf(writer)).db().createDoc('Profile Card', { title: 'not yours' });
    const attempt = sdk(tokenOf(outsider))
      .file()
      .uploadFile(new File(['x'], 'x.png', { type: 'image/png' }), { isPrivate: false, doctype: 'Profile Card', docname: card.name, fieldname: 'avatar' });
    await expect(attempt).rejects.toMatchObject({ httpStatus: 403, exc_type: 'PermissionError' });
  });
});
