import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocType, createUser, expectError, expectOk, type TestUser } from '../platform/helpers';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { connectTenantSocket } from '../support/sockets';

/**
 * A ToDo is its assignee's and its assigner's as well as its owner's (Frappe's ToDo has_permission
 * and permission_query_conditions), through apps/frappe/hooks.ts `ownerFields`: the role All's
 * `if_owner` rights on ToDo reach the user in `allocated_to` and in `assigned_by`, in every read
 * path (lists, counts, get_value, get_list, the sidebar's counts, export) and on one document (read,
 * write, delete), and nobody else's.
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

interface World {
  t: TestTenant;
  /** A System Manager: assigns the task. */
  manager: TestUser;
  /** The assignee: default roles only. */
  bob: TestUser;
  /** Neither owner, assignee nor assigner: default roles only. */
  carol: TestUser;
  /** The ToDo assign_to made for Bob. */
  todo: string;
  task: string;
}

async function world(): Promise<World> {
  const t = await server.tenant('asg');
  // Everyone may read a Shared Task, so a user with only the default roles can be assigned one.
  await createDocType(t, {
    name: 'Shared Task',
    module: 'Custom',
    fields: [{ fieldname: 'subject', fieldtype: 'Data' }],
    permissions: [
      { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
      { role: 'All', read: 1 },
    ],
  });
  const manager = await createUser(server, t, 'manager@example.com', ['System Manager']);
  const bob = await createUser(server, t, 'bob@example.com', []);
  const carol = await createUser(server, t, 'carol@example.com', []);
  const created = await t.call('POST', '/api/resource/Shared Task', { json: { subject: 'Renew the lease' } });
  expectOk(created);
  const task = created.body.data.name as string;
  const assigned = await method(
    t,
    'frappe.desk.form.assign_to.add',
    { assign_to: ['bob@example.com'], doctype: 'Shared Task', name: task, description: 'Call the landlord' },
    manager.auth,
  );
  expectOk(assigned);
  const todo = (assigned.body.message as Array<{ owner: string; name: string }>).find((a) => a.owner === 'bob@example.com')?.name;
  expect(todo).toBeTruthy();
  return { t, manager, bob, carol, todo: todo!, task };
}

function method(t: TestTenant, path: string, json: object, auth: string) {
  return t.call('POST', `/api/method/${path}`, { json, auth });
}

async function listNames(t: TestTenant, auth: string, filters?: object): Promise<string[]> {
  const res = await t.call('GET', '/api/resource/ToDo', { query: { ...(filters ? { filters: JSON.stringify(filters) } : {}), limit_page_length: 0 }, auth });
  expectOk(res);
  return (res.body.data as Array<{ name: string }>).map((r) => r.name).sort();
}

async function count(t: TestTenant, auth: string, filters: object = {}): Promise<number> {
  const res = await t.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'ToDo', filters: JSON.stringify(filters) }, auth });
  expectOk(res);
  return res.body.message as number;
}

describe('the assignee of a ToDo', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  }, 120_000);

  it('sees it in the list, reads it by name, and counts it', async () => {
    const { t, bob, todo, task } = w;
    expect(await listNames(t, bob.auth)).toEqual([todo]);
    const one = await t.call('GET', `/api/resource/ToDo/${todo}`, { auth: bob.auth });
    expectOk(one);
    expect(one.body.data).toMatchObject({
      name: todo,
      owner: 'manager@example.com',
      allocated_to: 'bob@example.com',
      assigned_by: 'manager@example.com',
      reference_type: 'Shared Task',
      reference_name: task,
      status: 'Open',
    });
    expect(await count(t, bob.auth)).toBe(1);
    expect(await count(t, bob.auth, { status: 'Open' })).toBe(1);
  });

  it("finds it through get_value, get_list and the sidebar's group-by counts", async () => {
    const { t, bob, todo } = w;
    const value = await t.call('GET', '/api/method/frappe.client.get_value', {
      query: { doctype: 'ToDo', filters: JSON.stringify({ reference_type: 'Shared Task' }), fieldname: 'description' },
      auth: bob.auth,
    });
    expectOk(value);
    expect(value.body.message).toEqual({ description: 'Call the landlord' });

    const list = await method(t, 'frappe.client.get_list', { doctype: 'ToDo', fields: ['name', 'allocated_to'], filters: { status: 'Open' } }, bob.auth);
    expectOk(list);
    expect(list.body.message).toEqual([{ name: todo, allocated_to: 'bob@example.com' }]);

    const byAssignee = await method(t, 'frappe.desk.listview.get_group_by_count', { doctype: 'ToDo', current_filters: [], field: 'allocated_to' }, bob.auth);
    expectOk(byAssignee);
    expect(byAssignee.body.message).toEqual([expect.objectContaining({ name: 'bob@example.com', count: 1 })]);
  });

  it('exports it (the if-owner export right counts an assigned ToDo as theirs)', async () => {
    const { t, bob, todo } = w;
    const res = await t.call('GET', '/api/method/frappe.desk.reportview.export_query', {
      query: { doctype: 'ToDo', file_format_type: 'CSV', fields: JSON.stringify(['name', 'allocated_to']), selected_items: JSON.stringify([todo]) },
      auth: bob.auth,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe(`"Sr","ID","Allocated To"\r\n1,"${todo}","bob@example.com"\r\n`);
  });

  it('closes it with a PUT, and the assigner sees it closed', async () => {
    const { t, bob, manager, todo } = w;
    const closed = await t.call('PUT', `/api/resource/ToDo/${todo}`, { json: { status: 'Closed' }, auth: bob.auth });
    expectOk(closed);
    expect(closed.body.data).toMatchObject({ name: todo, status: 'Closed', modified_by: 'bob@example.com' });
    const seen = await t.call('GET', `/api/resource/ToDo/${todo}`, { auth: manager.auth });
    expect(seen.body.data.status).toBe('Closed');
    expect(await count(t, bob.auth, { status: 'Closed' })).toBe(1);
    expect(await count(t, bob.auth, { status: 'Open' })).toBe(0);
  });

  it('keeps working with the ToDos they made themselves, beside the assigned one', async () => {
    const { t, bob, todo } = w;
    const own = await t.call('POST', '/api/resource/ToDo', { json: { description: 'Water the plants' }, auth: bob.auth });
    expectOk(own);
    const mine = own.body.data.name as string;
    expect(own.body.data.owner).toBe('bob@example.com');
    expect(await listNames(t, bob.auth)).toEqual([mine, todo].sort());
    expectOk(await t.call('PUT', `/api/resource/ToDo/${mine}`, { json: { priority: 'High' }, auth: bob.auth }));
    expectOk(await t.call('DELETE', `/api/resource/ToDo/${mine}`, { auth: bob.auth }), 202);
    expect(await listNames(t, bob.auth)).toEqual([todo]);
  });
});

describe('anyone else', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  }, 120_000);

  it('gets nothing: not in lists or counts, 403 by name, no write, no delete, no export', async () => {
    const { t, carol, todo } = w;
    expect(await listNames(t, carol.auth)).toEqual([]);
    expect(await count(t, carol.auth)).toBe(0);
    expectError(await t.call('GET', `/api/resource/ToDo/${todo}`, { auth: carol.auth }), 403, 'PermissionError');
    expectError(await t.call('PUT', `/api/resource/ToDo/${todo}`, { json: { status: 'Closed' }, auth: carol.auth }), 403, 'PermissionError');
    expectError(await t.call('DELETE', `/api/resource/ToDo/${todo}`, { auth: carol.auth }), 403, 'PermissionError');
    const value = await t.call('GET', '/api/method/frappe.client.get_value', {
      query: { doctype: 'ToDo', filters: JSON.stringify({ name: todo }), fieldname: 'description' },
      auth: carol.auth,
    });
    expect(value.body.message ?? {}).toEqual({});
    const exported = await t.call('GET', '/api/method/frappe.desk.reportview.export_query', {
      query: { doctype: 'ToDo', file_format_type: 'CSV', fields: JSON.stringify(['name']), selected_items: JSON.stringify([todo]) },
      auth: carol.auth,
    });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.text).toBe('"Sr","ID"\r\n');
    // Unchanged by the refused writes.
    const stored = await t.call('GET', `/api/resource/ToDo/${todo}`);
    expect(stored.body.data.status).toBe('Open');
  });

  it('may not take a ToDo by making themselves its assignee', async () => {
    const { t, carol, todo } = w;
    expectError(await t.call('PUT', `/api/resource/ToDo/${todo}`, { json: { allocated_to: 'carol@example.com' }, auth: carol.auth }), 403, 'PermissionError');
    expect(await listNames(t, carol.auth)).toEqual([]);
  });
});

describe('the assigner', () => {
  it('sees a ToDo they assigned though someone else made it (assigned_by), and loses it when it names someone else', async () => {
    const { t, bob, carol } = await world();
    // Made by the Administrator for Bob, on Carol's behalf: Carol is its assigner, not its owner.
    const made = await t.call('POST', '/api/resource/ToDo', {
      json: { description: 'Sign the contract', allocated_to: 'bob@example.com', assigned_by: 'carol@example.com' },
    });
    expectOk(made);
    const name = made.body.data.name as string;
    expect(made.body.data.owner).toBe('Administrator');
    expect(await listNames(t, carol.auth)).toEqual([name]);
    expect(await count(t, carol.auth)).toBe(1);
    expectOk(await t.call('GET', `/api/resource/ToDo/${name}`, { auth: carol.auth }));
    expect((await listNames(t, bob.auth)).includes(name)).toBe(true);

    expectOk(await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { assigned_by: 'Administrator' } }));
    expect(await listNames(t, carol.auth)).toEqual([]);
    expectError(await t.call('GET', `/api/resource/ToDo/${name}`, { auth: carol.auth }), 403, 'PermissionError');
  });
});

/** A socket of `user` on the tenant's namespace, subscribed to ToDo lists, and the list_update events it hears. */
async function listListener(t: TestTenant, user: TestUser): Promise<Array<{ doctype: string; name: string }>> {
  const socket = await connectTenantSocket(server.url, t.name, user.auth);
  sockets.push(socket);
  const heard: Array<{ doctype: string; name: string }> = [];
  socket.on('list_update', (payload: { doctype: string; name: string }) => heard.push(payload));
  expect(await socket.timeout(5000).emitWithAck('doctype_subscribe', 'ToDo')).toBe(true);
  return heard;
}

describe('live lists', () => {
  it('tell the assignee of a ToDo made for them, and both assignees when it is handed on, and nobody else', async () => {
    const { t, bob, carol } = await world();
    const dave = await createUser(server, t, 'dave@example.com', []);
    const [bobHeard, carolHeard] = [await listListener(t, bob), await listListener(t, carol)];
    const make = async (json: object) => {
      const res = await t.call('POST', '/api/resource/ToDo', { json });
      expectOk(res);
      return res.body.data.name as string;
    };
    const forDave = await make({ description: 'Not Bob’s', allocated_to: dave.email });
    const forBob = await make({ description: 'Bob’s', allocated_to: bob.email });
    await expect.poll(() => bobHeard.map((e) => e.name), { timeout: 10_000 }).toEqual([forBob]);
    expect(forDave).not.toBe(forBob);

    // Handed on to Carol: Bob hears it leave his list, Carol hears it arrive.
    expectOk(await t.call('PUT', `/api/resource/ToDo/${forBob}`, { json: { allocated_to: carol.email } }));
    await expect.poll(() => bobHeard.map((e) => e.name), { timeout: 10_000 }).toEqual([forBob, forBob]);
    await expect.poll(() => carolHeard.map((e) => e.name), { timeout: 10_000 }).toEqual([forBob]);
    expect(await listNames(t, carol.auth)).toEqual([forBob]);
    expect(await listNames(t, bob.auth)).not.toContain(forBob);
  });
});
