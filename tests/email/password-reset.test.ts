import { flushEmailQueue } from '@quire/email';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server';
import { contextOf, startSmtpSink, type SmtpSink } from './support';

/** Forgot-password end to end: reset_password queues the email, a flush delivers it, its link's key sets a new password once. */

let server: TestServer;
let sink: SmtpSink;

beforeAll(async () => {
  server = await startTestServer();
  sink = await startSmtpSink();
}, 60_000);
afterAll(async () => {
  await sink.close();
  await server.close();
});

describe('password reset email', () => {
  it('reset_password, then a flush delivers the link to the user; its key works with update_password once', async () => {
    const t = await server.tenant('pr');
    const made = await t.call('POST', '/api/resource/User', { json: { email: 'dee@example.com', first_name: 'Dee' } });
    expect(made.status, made.text).toBe(200);

    const reset = await call(server.url, t.name, 'POST', '/api/method/frappe.core.doctype.user.user.reset_password', {
      auth: null,
      json: { user: 'dee@example.com' },
    });
    expect(reset.status, reset.text).toBe(200);

    const summary = await flushEmailQueue(await contextOf(server, t), { defaultSmtpUrl: sink.url, siteUrl: `http://${t.name}.localhost` });
    expect(summary).toEqual({ sent: 1, failed: 0, deferred: 0 });
    const mail = sink.received.find((m) => m.to.includes('dee@example.com') && m.body.includes(t.name));
    expect(mail).toMatchObject({ subject: 'Password Reset', from: `noreply@${t.name}.localhost` });
    const link = /(http:\/\/\S+\/update-password\?key=([0-9a-f]{64}))/.exec(mail!.body);
    expect(link?.[1]?.startsWith(`http://${t.name}.localhost/update-password?key=`), mail!.body).toBe(true);
    const key = link![2]!;

    const update = () =>
      call(server.url, t.name, 'POST', '/api/method/frappe.core.doctype.user.user.update_password', {
        auth: null,
        json: { key, new_password: 'brand new pass 7!' },
      });
    expect((await update()).body).toEqual({ message: '/app' });
    expect((await update()).status).toBe(410);
    const login = await call(server.url, t.name, 'POST', '/api/method/login', { auth: null, json: { usr: 'dee@example.com', pwd: 'brand new pass 7!' } });
    expect(login.status, login.text).toBe(200);
  });
});
