import { flushEmailQueue } from '@quire/email';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { contextOf, createEmailAccount, queueEmail, queueRow, selfSignedCertificate, startSmtpSink, type Certificate, type SmtpSink } from './support';

/**
 * Encrypted connections to the mail server, with a certificate made for the test (openssl): an
 * Email Account's Use TLS (STARTTLS) and Use SSL (implicit TLS), the platform URL's `smtps` and
 * `starttls=required`, the login only ever sent encrypted, and a certificate nobody vouched for
 * refused unless the caller trusts its CA.
 */

let server: TestServer;
let certificate: Certificate;
let starttls: SmtpSink;
let implicit: SmtpSink;
const login = { user: 'mailer@acme.test', password: 'tls secret' };

beforeAll(async () => {
  certificate = selfSignedCertificate();
  server = await startTestServer();
  starttls = await startSmtpSink({ tls: 'starttls', certificate, login });
  implicit = await startSmtpSink({ tls: 'implicit', certificate, login });
}, 60_000);
afterAll(async () => {
  await starttls.close();
  await implicit.close();
  await server.close();
});

describe('TLS', () => {
  it('an Email Account with Use TLS upgrades with STARTTLS before logging in, trusting the CA it is given', async () => {
    const t = await server.tenant('ts');
    await createEmailAccount(t, starttls, { email_id: login.user, password: login.password, use_tls: 1, default_outgoing: 1 });
    const name = await queueEmail(t, { subject: `STARTTLS ${t.name}` });
    expect(await flushEmailQueue(await contextOf(server, t), { tlsCa: certificate.cert })).toEqual({ sent: 1, failed: 0, deferred: 0 });
    const mail = starttls.received.find((m) => m.subject === `STARTTLS ${t.name}`);
    expect(mail).toMatchObject({ secure: true, user: login.user });
    expect((await queueRow(server, t, name)).status).toBe('Sent');
  });

  it('an Email Account with Use SSL speaks TLS from the first byte', async () => {
    const t = await server.tenant('ti');
    await createEmailAccount(t, implicit, { email_id: login.user, password: login.password, use_ssl_for_outgoing: 1, default_outgoing: 1 });
    await queueEmail(t, { subject: `Implicit ${t.name}` });
    expect(await flushEmailQueue(await contextOf(server, t), { tlsCa: certificate.cert })).toEqual({ sent: 1, failed: 0, deferred: 0 });
    expect(implicit.received.find((m) => m.subject === `Implicit ${t.name}`)).toMatchObject({ secure: true, user: login.user });
  });

  it('the platform URL: smtps:// is implicit TLS, smtp://…?starttls=required upgrades first', async () => {
    const t = await server.tenant('tu');
    const credentials = `${encodeURIComponent(login.user)}:${encodeURIComponent(login.password)}`;
    const ctx = await contextOf(server, t);
    await queueEmail(t, { subject: `smtps ${t.name}` });
    expect(await flushEmailQueue(ctx, { defaultSmtpUrl: `smtps://${credentials}@127.0.0.1:${implicit.port}`, tlsCa: certificate.cert })).toMatchObject({
      sent: 1,
    });
    await queueEmail(t, { subject: `starttls ${t.name}` });
    expect(
      await flushEmailQueue(ctx, { defaultSmtpUrl: `smtp://${credentials}@127.0.0.1:${starttls.port}?starttls=required`, tlsCa: certificate.cert }),
    ).toMatchObject({ sent: 1 });
    expect(implicit.received.find((m) => m.subject === `smtps ${t.name}`)?.secure).toBe(true);
    expect(starttls.received.find((m) => m.subject === `starttls ${t.name}`)?.secure).toBe(true);
  });

  it('a certificate nobody vouched for is refused (the attempt fails, no login is sent); tlsRejectUnauthorized: false accepts it', async () => {
    const t = await server.tenant('tr');
    await createEmailAccount(t, implicit, { email_id: login.user, password: login.password, use_ssl_for_outgoing: 1, default_outgoing: 1 });
    const name = await queueEmail(t, { subject: `Untrusted ${t.name}` });
    const ctx = await contextOf(server, t);
    const loginsBefore = implicit.logins.length;

    expect(await flushEmailQueue(ctx)).toEqual({ sent: 0, failed: 1, deferred: 0 });
    const row = await queueRow(server, t, name);
    expect(row).toMatchObject({ status: 'Not Sent', retry: 1 });
    expect(row.error).toMatch(/self[- ]signed|certificate/i);
    expect(implicit.logins.length).toBe(loginsBefore);

    await server.db.query(`UPDATE "${t.schema}"."tabEmail Queue" SET "send_after" = NULL WHERE "name" = $1`, [name]);
    expect(await flushEmailQueue(ctx, { tlsRejectUnauthorized: false })).toEqual({ sent: 1, failed: 0, deferred: 0 });
  });

  it('starttls=required against a server that offers no STARTTLS fails rather than sending the login in the clear', async () => {
    const plain = await startSmtpSink({ login });
    try {
      const t = await server.tenant('tp');
      const name = await queueEmail(t, { subject: `Plain ${t.name}` });
      const url = `smtp://${encodeURIComponent(login.user)}:${encodeURIComponent(login.password)}@127.0.0.1:${plain.port}?starttls=required`;
      expect(await flushEmailQueue(await contextOf(server, t), { defaultSmtpUrl: url })).toEqual({ sent: 0, failed: 1, deferred: 0 });
      expect((await queueRow(server, t, name)).error).toMatch(/STARTTLS/i);
      expect(plain.logins).toHaveLength(0);
      expect(plain.received).toHaveLength(0);
    } finally {
      await plain.close();
    }
  });
});
