import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { connectTenantSocket } from '../support/sockets';

/**
 * A form open on a document hears `docinfo_update` (Frappe's Comment.notify_change) when a comment
 * or an assignment is added to it or a comment deleted, once the change commits, so its timeline
 * follows without a reload.
 */

let server: TestServer;
const sockets: Socket[] = [];

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(async () => {
  for (const s of sockets) s.disconnect();
  await server.close();
});

async function connect(t: TestTenant): Promise<Socket> {
  const socket = await connectTenantSocket(server.url, t.name, t.auth);
  sockets.push(socket);
  return socket;
}

type DocinfoUpdate = { doc: Record<string, unknown>; key: string; action: string };

describe('docinfo_update', () => {
  it('reaches the document’s subscribers for a comment added and deleted, and for an assignment', async () => {
    const t = await server.tenant();
    const todo = (await t.call('POST', '/api/resource/ToDo', { json: { description: 'Watched' } })).body.data as { name: string };
    const socket = await connect(t);
    const heard: DocinfoUpdate[] = [];
    socket.on('docinfo_update', (payload: DocinfoUpdate) => heard.push(payload));
    expect(await socket.timeout(5000).emitWithAck('doc_subscribe', 'ToDo', todo.name)).toBe(true);

    const added = await t.call('POST', '/api/method/frappe.desk.form.utils.add_comment', {
      json: { reference_doctype: 'ToDo', reference_name: todo.name, content: 'Seen live', comment_email: 'Administrator', comment_by: 'Administrator' },
    });
    const comment = added.body.message as { name: string };
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(1);
    expect(heard[0]).toMatchObject({ key: 'comments', action: 'add', doc: { name: comment.name, content: 'Seen live', reference_name: todo.name } });

    await t.call('DELETE', `/api/resource/Comment/${comment.name}`);
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(2);
    expect(heard[1]).toMatchObject({ key: 'comments', action: 'delete', doc: { name: comment.name } });

    await t.call('POST', '/api/method/frappe.desk.form.assign_to.add', { json: { assign_to: ['Administrator'], doctype: 'ToDo', name: todo.name } });
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(3);
    expect(heard[2]).toMatchObject({ key: 'assignment_logs', action: 'add', doc: { comment_type: 'Assigned' } });
  });
});
