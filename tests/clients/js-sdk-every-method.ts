import type { FrappeApp } from 'frappe-js-sdk';
import { expect, it } from 'vitest';
import { SDK_SETTINGS, SDK_TASK } from '../support/doctypes';
import type { TestTenant } from '../support/server';

/**
 * Every public method of frappe-js-sdk (auth, db, call, file), exercised against a running Quire
 * with the wire shapes the SDK reads (frappe-clients.md §2). Shared by the token-auth run (Node)
 * and the cookie-session run (jsdom).
 */

export const PASSWORD = 'every method 42';

/** DocTypes and a user the exercise needs, created through the API as the Administrator. */
export async function prepareTenant(t: TestTenant): Promise<void> {
  for (const json of [SDK_TASK, SDK_SETTINGS]) expect((await t.call('POST', '/api/resource/DocType', { json })).status).toBe(200);
  const user = await t.call('POST', '/api/resource/User', {
    json: { email: 'sdk@example.com', first_name: 'Sdk', new_password: PASSWORD, roles: [{ role: 'System Manager' }] },
  });
  expect(user.status).toBe(200);
}

interface Task {
  name: string;
  subject: string;
  points?: number;
  done?: number;
  docstatus?: number;
  modified?: string;
  attachment?: string;
}

/** Declares one test per SDK method group; `app()` is the FrappeApp under test, `user` whom it acts as. */
export function everyMethod(app: () => FrappeApp, user: () => string, makeFile: (name: string, text: string) => unknown): void {
  it('auth.getLoggedInUser answers the caller', async () => {
    expect(await app().auth().getLoggedInUser()).toBe(user());
  });

  it('db.createDoc, getDoc, updateDoc, getDocList, getCount, getLastDoc, deleteDoc', async () => {
    const db = app().db();
    const a = await db.createDoc<Task>('SDK Task', { subject: 'first', points: 3 } as Task);
    const b = await db.createDoc<Task>('SDK Task', { subject: 'second', points: 5 } as Task);
    expect((await db.getDoc<Task>('SDK Task', a.name)).subject).toBe('first');
    expect((await db.updateDoc<Task>('SDK Task', a.name, { points: 4 })).points).toBe(4);
    const rows = await db.getDocList<Task>('SDK Task', {
      fields: ['name', 'points'],
      filters: [['points', '>=', 4]],
      orderBy: { field: 'points', order: 'asc' },
      limit: 10,
    });
    expect(rows).toEqual([
      { name: a.name, points: 4 },
      { name: b.name, points: 5 },
    ]);
    expect(await db.getCount('SDK Task', [['points', '>', 4]])).toBe(1);
    expect((await db.getLastDoc<Task>('SDK Task', { orderBy: { field: 'points', order: 'desc' } })).name).toBe(b.name);
    expect(await db.deleteDoc('SDK Task', a.name)).toEqual({ data: 'ok' });
    expect(await db.deleteDoc('SDK Task', b.name)).toEqual({ data: 'ok' });
  });

  it('db.getValue, setValue and getSingleValue answer whole bodies', async () => {
    const db = app().db();
    const doc = await db.createDoc<Task>('SDK Task', { subject: 'values', points: 1 } as Task);
    expect(await db.getValue('SDK Task', 'subject', [['name', '=', doc.name]])).toEqual({ message: { subject: 'values' } });
    const set = (await db.setValue('SDK Task', doc.name, 'points', 9)) as { message: Task };
    expect(set.message.points).toBe(9);
    const many = (await db.setValue('SDK Task', doc.name, { points: 10, done: 1 })) as { message: Task };
    expect([many.message.points, many.message.done]).toEqual([10, 1]);
    expect(await db.getSingleValue('SDK Settings', 'theme')).toEqual({ message: 'light' });
    await db.deleteDoc('SDK Task', doc.name);
  });

  it('db.renameDoc, submit and cancel', async () => {
    const db = app().db();
    const doc = await db.createDoc<Task>('SDK Task', { subject: 'lifecycle' } as Task);
    const newName = `renamed-${doc.name}`;
    expect(await db.renameDoc('SDK Task', doc.name, newName)).toEqual({ message: newName });
    const fresh = await db.getDoc<Task>('SDK Task', newName);
    const submitted = await db.submit<Task>(fresh);
    expect(submitted.docstatus).toBe(1);
    await db.cancel('SDK Task', newName);
    expect((await db.getDoc<Task>('SDK Task', newName)).docstatus).toBe(2);
  });

  it('call.get, post, put and delete answer whole bodies', async () => {
    const call = app().call();
    expect(await call.get('frappe.client.get_count', { doctype: 'User' })).toEqual({ message: 3 });
    expect(await call.post('frappe.client.get_count', { doctype: 'User', filters: [['name', '=', 'Administrator']] })).toEqual({ message: 1 });
    const doc = await app()
      .db()
      .createDoc<Task>('SDK Task', { subject: 'via call' } as Task);
    const put = await call.put<{ message: Task }>('frappe.client.set_value', { doctype: 'SDK Task', name: doc.name, fieldname: 'points', value: 7 });
    expect(put.message.points).toBe(7);
    expect(await call.delete('frappe.client.delete', { doctype: 'SDK Task', name: doc.name })).toEqual({});
  });

  it('file.uploadFile uploads, attaches to a document, and the file is served back', async () => {
    const doc = await app()
      .db()
      .createDoc<Task>('SDK Task', { subject: 'with a file' } as Task);
    const res = (await app()
      .file()
      .uploadFile(makeFile('notes.txt', 'hello from the sdk') as File, {
        isPrivate: false,
        doctype: 'SDK Task',
        docname: doc.name,
        fieldname: 'attachment',
      })) as {
      data: { message: { file_url: string; file_name: string; attached_to_name: string } };
    };
    const file = res.data.message;
    expect(file.file_name).toBe('notes.txt');
    expect(file.attached_to_name).toBe(doc.name);
    expect(file.file_url).toMatch(/^\/files\//);
    expect((await app().db().getDoc<Task>('SDK Task', doc.name)).attachment).toBe(file.file_url);
  });

  it('auth.forgetPassword queues a reset mail for a user and rejects for an unknown one', async () => {
    await expect(app().auth().forgetPassword('sdk@example.com')).resolves.toBeUndefined();
    await expect(app().auth().forgetPassword('nobody@example.com')).rejects.toMatchObject({ httpStatus: 404 });
  });
}
