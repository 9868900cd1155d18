import { flushEmailQueue } from '@quire/email';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, expectError } from '../platform/helpers';
import { startTestServer, type TestServer } from '../support/server';
import { contextOf, createEmailAccount, queueEmail, queueRow, startSmtpSink, type SmtpSink } from './support';

/**
 * The Email Account DocType through the record API, as a Frappe client writes it: named after its
 * address, its password kept encrypted and never answered, one default outgoing account, System
 * Managers only; and the account so made is what the queue is sent through.
 */

let server: TestServer;
let sink: SmtpSink;
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  server = await startTestServer();
  sink = await startSmtpSink({ login: { user: 'smtp-login@acme.test', password: PASSWORD } });
}, 60_000);
afterAll(async () => {
  await sink.close();
  await server.close();
});

describe('Email Account', () => {
  it('POST as Administrator: named after the address; the password is stored encrypted, never returned, and used to send', async () => {
    const t = await server.tenant('ea');
    const created = await createEmailAccount(t, sink, {
      email_id: 'support@acme.test',
      default_outgoing: 1,
      login_id_is_different: 1,
      login_id: 'smtp-login@acme.test',
      password: PASSWORD,
    });
    expect(created).toMatchObject({ name: 'Support', email_account_name: 'Support', email_id: 'support@acme.test', enable_outgoing: 1 });
    expect(created.password).toMatch(/^\*+$/);

    const one = await t.call('GET', '/api/resource/Email Account/Support');
    expect(one.status).toBe(200);
    expect(one.body.data.password).toMatch(/^\*+$/);
    const list = await t.call('GET', '/api/resource/Email Account', { query: { fields: '["*"]' } });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    for (const res of [one, list]) expect(res.text).not.toContain(PASSWORD);
    const { rows } = await server.db.query<{ password: string }>(
      `SELECT "password" FROM "${t.schema}"."__Auth" WHERE "doctype" = 'Email Account' AND "name" = 'Support'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.password).not.toContain(PASSWORD);

    const name = await queueEmail(t, { subject: `Through Support ${t.name}` });
    expect(await flushEmailQueue(await contextOf(server, t))).toEqual({ sent: 1, failed: 0, deferred: 0 });
    const mail = sink.received.find((m) => m.subject === `Through Support ${t.name}`);
    // The login is login_id; the sender, with none on the row, the account's address.
    expect(mail).toMatchObject({ user: 'smtp-login@acme.test', from: 'support@acme.test' });
    expect(sink.logins.at(-1)).toEqual({ user: 'smtp-login@acme.test', password: PASSWORD });
    expect((await queueRow(server, t, name)).status).toBe('Sent');
  });

  it('a PUT with the mask keeps the password; a PUT with a new one replaces it', async () => {
    const t = await server.tenant('ep');
    await createEmailAccount(t, sink, { email_id: 'smtp-login@acme.test', default_outgoing: 1, password: 'not it' });
    const ctx = await contextOf(server, t);

    let res = await t.call('PUT', '/api/resource/Email Account/Smtp Login', { json: { password: '******', smtp_port: sink.port } });
    expect(res.status, res.text).toBe(200);
    await queueEmail(t, { subject: `Old password ${t.name}` });
    expect(await flushEmailQueue(ctx)).toEqual({ sent: 0, failed: 1, deferred: 0 });
    expect(sink.logins.at(-1)).toEqual({ user: 'smtp-login@acme.test', password: 'not it' });

    res = await t.call('PUT', '/api/resource/Email Account/Smtp Login', { json: { password: PASSWORD } });
    expect(res.status, res.text).toBe(200);
    expect(res.text).not.toContain(PASSWORD);
    await server.db.query(`UPDATE "${t.schema}"."tabEmail Queue" SET "send_after" = NULL`);
    expect(await flushEmailQueue(ctx)).toEqual({ sent: 1, failed: 0, deferred: 0 });
  });

  it('one default outgoing account: making another the default unsets the first', async () => {
    const t = await server.tenant('ed');
    await createEmailAccount(t, sink, { email_id: 'first@acme.test', default_outgoing: 1 });
    await createEmailAccount(t, sink, { email_id: 'second@acme.test', default_outgoing: 1 });
    const res = await t.call('GET', '/api/resource/Email Account', { query: { fields: '["name","default_outgoing"]', order_by: 'name asc' } });
    expect(res.body.data).toEqual([
      { name: 'First', default_outgoing: 0 },
      { name: 'Second', default_outgoing: 1 },
    ]);
  });

  it('outgoing needs a server; TLS and SSL together are refused (417)', async () => {
    const t = await server.tenant('ev');
    let res = await t.call('POST', '/api/resource/Email Account', { json: { email_id: 'a@acme.test', enable_outgoing: 1 } });
    expectError(res, 417, 'ValidationError');
    expect(res.text).toContain('SMTP Server is required');
    res = await t.call('POST', '/api/resource/Email Account', {
      json: { email_id: 'a@acme.test', enable_outgoing: 1, smtp_server: 'smtp.acme.test', use_tls: 1, use_ssl_for_outgoing: 1 },
    });
    expectError(res, 417, 'ValidationError');
    res = await t.call('POST', '/api/resource/Email Account', { json: { email_id: 'not an address', enable_outgoing: 0 } });
    expect(res.status).toBe(417);
  });

  it('only System Managers may read or create Email Accounts', async () => {
    const t = await server.tenant('er');
    await createEmailAccount(t, sink, { email_id: 'secret@acme.test', password: PASSWORD });
    const user = await createUser(server, t, 'desk@acme.test', ['Desk User']);
    expectError(await t.call('GET', '/api/resource/Email Account/Secret', { auth: user.auth }), 403, 'PermissionError');
    expectError(await t.call('GET', '/api/resource/Email Account', { auth: user.auth }), 403, 'PermissionError');
    expectError(
      await t.call('POST', '/api/resource/Email Account', {
        auth: user.auth,
        json: { email_id: 'mine@acme.test', smtp_server: 'evil.test', enable_outgoing: 1 },
      }),
      403,
      'PermissionError',
    );
  });
});
