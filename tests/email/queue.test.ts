import { flushEmailQueue, sendQueuedEmail } from '@quire/email';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { contextOf, createEmailAccount, minutesAfter, queueEmail, queueRow, startSmtpSink, type SmtpSink } from './support';

/**
 * The Email Queue sent to a real SMTP server: delivery, one send per row however many flushes run
 * at once, failed attempts counted and given up after the third, the platform's server for a
 * tenant without an account, rows left alone when there is no server at all, and a claim whose
 * process died taken again after its lease.
 */

let server: TestServer;
let sink: SmtpSink;

beforeAll(async () => {
  server = await startTestServer();
  sink = await startSmtpSink({ delayMs: 20 });
}, 60_000);
afterAll(async () => {
  await sink.close();
  await server.close();
});

const receivedWith = (subject: string) => sink.received.filter((m) => m.subject === subject);

describe('sending the queue', () => {
  it('a queued email reaches the server (recipients, subject, body) and its row becomes Sent with its Message-ID', async () => {
    const t = await server.tenant('mq');
    const subject = `Welcome ${t.name}`;
    const name = await queueEmail(t, {
      sender: 'team@acme.test',
      recipients: 'ana@example.com, bo@example.com\ncy@example.com',
      subject,
      message: 'Your account is ready.',
    });

    const summary = await flushEmailQueue(await contextOf(server, t), { defaultSmtpUrl: sink.url });

    expect(summary).toEqual({ sent: 1, failed: 0, deferred: 0 });
    const [mail] = receivedWith(subject);
    expect(mail).toBeDefined();
    expect(mail!.from).toBe('team@acme.test');
    expect(mail!.to).toEqual(['ana@example.com', 'bo@example.com', 'cy@example.com']);
    expect(mail!.body.trim()).toBe('Your account is ready.');
    const row = await queueRow(server, t, name);
    expect(row).toMatchObject({ status: 'Sent', retry: 0 });
    expect(row.message_id).toBe(mail!.headers['message-id']);
    expect(row.message_id).toBe(`<${name}@acme.test>`);

    // Sent is sent: the next flush has nothing to do.
    expect(await flushEmailQueue(await contextOf(server, t), { defaultSmtpUrl: sink.url })).toEqual({ sent: 0, failed: 0, deferred: 0 });
    expect(receivedWith(subject)).toHaveLength(1);
  });

  it('two flushes at once send every row exactly once, each over one connection', async () => {
    const t = await server.tenant('mc');
    const subjects = Array.from({ length: 12 }, (_, i) => `Batch ${t.name} #${i}`);
    for (const subject of subjects) await queueEmail(t, { subject });
    const ctx = await contextOf(server, t);
    const connectionsBefore = sink.connections();

    const [a, b] = await Promise.all([flushEmailQueue(ctx, { defaultSmtpUrl: sink.url }), flushEmailQueue(ctx, { defaultSmtpUrl: sink.url })]);

    expect(a.sent + b.sent).toBe(subjects.length);
    // Both took part (each message takes the server 20 ms, so neither finishes before the other starts).
    expect(Math.min(a.sent, b.sent)).toBeGreaterThan(0);
    // Each flush kept one connection for all its emails.
    expect(sink.connections() - connectionsBefore).toBe(2);
    expect(a.failed + b.failed + a.deferred + b.deferred).toBe(0);
    for (const subject of subjects) expect(receivedWith(subject), subject).toHaveLength(1);
    const { rows } = await server.db.query<{ status: string }>(`SELECT DISTINCT "status" FROM "${t.schema}"."tabEmail Queue"`);
    expect(rows).toEqual([{ status: 'Sent' }]);
  });

  it('an email whose send_after is ahead waits for it; a flush takes the oldest first, at most `limit`', async () => {
    const t = await server.tenant('ml');
    const now = new Date();
    const later = await queueEmail(t, { subject: `Later ${t.name}`, send_after: '2999-01-01 00:00:00' });
    for (let i = 0; i < 3; i++) await queueEmail(t, { subject: `Now ${t.name} ${i}` });
    const ctx = await contextOf(server, t);

    expect(await flushEmailQueue(ctx, { defaultSmtpUrl: sink.url, now, limit: 2 })).toEqual({ sent: 2, failed: 0, deferred: 0 });
    // Oldest first.
    expect(sink.received.filter((m) => m.subject.startsWith(`Now ${t.name}`)).map((m) => m.subject)).toEqual([`Now ${t.name} 0`, `Now ${t.name} 1`]);
    expect(await flushEmailQueue(ctx, { defaultSmtpUrl: sink.url, now })).toEqual({ sent: 1, failed: 0, deferred: 0 });
    expect((await queueRow(server, t, later)).status).toBe('Not Sent');
    expect(await sendQueuedEmail(ctx, later, { defaultSmtpUrl: sink.url, now })).toBe('not due');
    expect(await flushEmailQueue(ctx, { defaultSmtpUrl: sink.url, now: new Date('2999-01-01T00:00:01Z') })).toEqual({ sent: 1, failed: 0, deferred: 0 });
    expect(receivedWith(`Later ${t.name}`)).toHaveLength(1);
  });

  it('sendQueuedEmail sends one row by the same claim, and never twice', async () => {
    const t = await server.tenant('mo');
    const name = await queueEmail(t, { subject: `One ${t.name}` });
    const ctx = await contextOf(server, t);
    const outcomes = await Promise.all([sendQueuedEmail(ctx, name, { defaultSmtpUrl: sink.url }), sendQueuedEmail(ctx, name, { defaultSmtpUrl: sink.url })]);
    expect(outcomes.sort()).toEqual(['not due', 'sent']);
    expect(receivedWith(`One ${t.name}`)).toHaveLength(1);
    expect((await queueRow(server, t, name)).status).toBe('Sent');
  });
});

describe('failures', () => {
  let refusing: SmtpSink;
  beforeAll(async () => {
    refusing = await startSmtpSink({ refuse: 'Go away, stranger' });
  });
  afterAll(() => refusing.close());

  it('a refused login puts the row back to Not Sent with retry=1, a minute later; the third failure is Error with the server’s message', async () => {
    const t = await server.tenant('mr');
    await createEmailAccount(t, refusing, { email_id: 'out@acme.test', default_outgoing: 1, password: 'wrong password' });
    const name = await queueEmail(t, { subject: `Refused ${t.name}` });
    const ctx = await contextOf(server, t);
    const start = new Date();

    expect(await flushEmailQueue(ctx, { now: start })).toEqual({ sent: 0, failed: 1, deferred: 0 });
    let row = await queueRow(server, t, name);
    expect(row).toMatchObject({ status: 'Not Sent', retry: 1 });
    expect(row.error).toContain('Go away, stranger');
    expect(Date.parse(`${row.send_after!.replace(' ', 'T')}Z`) - start.getTime()).toBeCloseTo(60_000, -3);
    expect(refusing.logins.at(-1)).toEqual({ user: 'out@acme.test', password: 'wrong password' });

    // Not before its send_after.
    expect(await flushEmailQueue(ctx, { now: minutesAfter(start, 0.5) })).toEqual({ sent: 0, failed: 0, deferred: 0 });

    expect(await flushEmailQueue(ctx, { now: minutesAfter(start, 1) })).toEqual({ sent: 0, failed: 1, deferred: 0 });
    expect(await queueRow(server, t, name)).toMatchObject({ status: 'Not Sent', retry: 2 });

    expect(await flushEmailQueue(ctx, { now: minutesAfter(start, 4) })).toEqual({ sent: 0, failed: 1, deferred: 0 });
    row = await queueRow(server, t, name);
    expect(row).toMatchObject({ status: 'Error', retry: 3 });
    expect(row.error).toContain('Go away, stranger');
    expect(row.error).not.toContain('wrong password');

    // Error is final: no more attempts.
    expect(await flushEmailQueue(ctx, { now: minutesAfter(start, 60) })).toEqual({ sent: 0, failed: 0, deferred: 0 });
    expect(refusing.logins.filter((l) => l.password === 'wrong password')).toHaveLength(3);
  });

  it('once a server has failed, the flush leaves the rest of its rows for the next one instead of failing each', async () => {
    const t = await server.tenant('mb');
    await createEmailAccount(t, refusing, { email_id: 'out@acme.test', default_outgoing: 1, password: 'wrong password' });
    const names = [await queueEmail(t, { subject: 'a' }), await queueEmail(t, { subject: 'b' }), await queueEmail(t, { subject: 'c' })];
    const summary = await flushEmailQueue(await contextOf(server, t));
    expect(summary).toEqual({ sent: 0, failed: 1, deferred: 2 });
    const rows = await Promise.all(names.map((n) => queueRow(server, t, n)));
    expect(rows.map((r) => [r.status, r.retry])).toEqual([
      ['Not Sent', 1],
      ['Not Sent', 0],
      ['Not Sent', 0],
    ]);
  });

  it('an unreachable server fails the attempt within the connection timeout instead of holding the worker', async () => {
    const t = await server.tenant('mu');
    const name = await queueEmail(t, { subject: `Nowhere ${t.name}` });
    // A closed port on this machine: refused at once.
    const closed = await startSmtpSink();
    await closed.close();
    const started = Date.now();
    expect(await flushEmailQueue(await contextOf(server, t), { defaultSmtpUrl: closed.url })).toEqual({ sent: 0, failed: 1, deferred: 0 });
    expect(Date.now() - started).toBeLessThan(10_000);
    const row = await queueRow(server, t, name);
    expect(row).toMatchObject({ status: 'Not Sent', retry: 1 });
    expect(row.error).toMatch(/ECONNREFUSED|ECONNECTION|connect/i);
  });

  it('an Email Account named by the row that does not exist fails the row with Frappe’s OutgoingEmailError message', async () => {
    const t = await server.tenant('mn');
    const name = await queueEmail(t, { subject: 'x' });
    await server.db.query(`UPDATE "${t.schema}"."tabEmail Queue" SET "email_account" = 'Gone' WHERE "name" = $1`, [name]);
    expect(await flushEmailQueue(await contextOf(server, t), { defaultSmtpUrl: sink.url })).toEqual({ sent: 0, failed: 1, deferred: 0 });
    expect(await queueRow(server, t, name)).toMatchObject({ status: 'Not Sent', retry: 1, error: 'Email Account Gone not found' });
  });
});

describe('which server', () => {
  it('the platform’s server (an SMTP_URL) sends for a tenant without an Email Account, from noreply@ the site’s host or the configured sender', async () => {
    const t = await server.tenant('mp');
    const platform = await startSmtpSink({ login: { user: 'relay@platform.test', password: 'p@ss:w/rd' } });
    try {
      await queueEmail(t, { subject: `Platform ${t.name} 1` });
      const url = `smtp://${encodeURIComponent('relay@platform.test')}:${encodeURIComponent('p@ss:w/rd')}@127.0.0.1:${platform.port}`;
      const ctx = await contextOf(server, t);
      expect(await flushEmailQueue(ctx, { defaultSmtpUrl: url, siteUrl: `http://${t.name}.localhost:8000` })).toEqual({ sent: 1, failed: 0, deferred: 0 });
      expect(platform.received.map((m) => [m.subject, m.from, m.user])).toEqual([
        [`Platform ${t.name} 1`, `noreply@${t.name}.localhost`, 'relay@platform.test'],
      ]);

      await queueEmail(t, { subject: `Platform ${t.name} 2` });
      expect(await flushEmailQueue(ctx, { defaultSmtpUrl: url, defaultSender: 'notifications@platform.test' })).toMatchObject({ sent: 1 });
      expect(platform.received.at(-1)?.from).toBe('notifications@platform.test');
    } finally {
      await platform.close();
    }
  });

  it('with no Email Account and no platform server the rows stay Not Sent, no attempt counted, and the flush says so', async () => {
    const t = await server.tenant('mx');
    const name = await queueEmail(t, { subject: `Stays ${t.name}` });
    const ctx = await contextOf(server, t);
    expect(await flushEmailQueue(ctx)).toEqual({ sent: 0, failed: 0, deferred: 1 });
    expect(await sendQueuedEmail(ctx, name)).toBe('deferred');
    expect(await queueRow(server, t, name)).toMatchObject({ status: 'Not Sent', retry: 0, error: null });
    // Once a server is there, it goes.
    expect(await flushEmailQueue(ctx, { defaultSmtpUrl: sink.url })).toEqual({ sent: 1, failed: 0, deferred: 0 });
  });

  it('the tenant’s default outgoing account wins over the platform’s server; a row naming another account goes through that one', async () => {
    const t = await server.tenant('md');
    const other = await startSmtpSink();
    try {
      await createEmailAccount(t, sink, { email_id: 'default@acme.test', default_outgoing: 1 });
      const second = await createEmailAccount(t, other, { email_id: 'billing@acme.test', always_use_account_email_id_as_sender: 1 });
      expect(second.name).toBe('Billing');
      await queueEmail(t, { subject: `Default ${t.name}` });
      await queueEmail(t, { subject: `Billing ${t.name}`, sender: 'someone@acme.test', email_account: 'Billing' });
      const platform = await startSmtpSink();
      try {
        expect(await flushEmailQueue(await contextOf(server, t), { defaultSmtpUrl: platform.url })).toEqual({ sent: 2, failed: 0, deferred: 0 });
        expect(platform.received).toHaveLength(0);
      } finally {
        await platform.close();
      }
      expect(receivedWith(`Default ${t.name}`).map((m) => m.from)).toEqual(['default@acme.test']);
      // always_use_account_email_id_as_sender: the account's address, whatever the row says.
      expect(other.received.map((m) => [m.subject, m.from])).toEqual([[`Billing ${t.name}`, 'billing@acme.test']]);
    } finally {
      await other.close();
    }
  });
});

describe('a claim whose process died', () => {
  it('a row left in Sending past the 10-minute lease is taken again; one claimed a minute ago is not', async () => {
    const t = await server.tenant('mk');
    const stale = await queueEmail(t, { subject: `Stale ${t.name}` });
    const fresh = await queueEmail(t, { subject: `Fresh ${t.name}` });
    const table = `"${t.schema}"."tabEmail Queue"`;
    await server.db.query(`UPDATE ${table} SET "status" = 'Sending', "modified" = (now() at time zone 'utc') - interval '11 minutes' WHERE "name" = $1`, [
      stale,
    ]);
    await server.db.query(`UPDATE ${table} SET "status" = 'Sending', "modified" = (now() at time zone 'utc') - interval '1 minute' WHERE "name" = $1`, [fresh]);

    expect(await flushEmailQueue(await contextOf(server, t), { defaultSmtpUrl: sink.url })).toEqual({ sent: 1, failed: 0, deferred: 0 });
    expect((await queueRow(server, t, stale)).status).toBe('Sent');
    expect((await queueRow(server, t, fresh)).status).toBe('Sending');
    expect(receivedWith(`Stale ${t.name}`)).toHaveLength(1);
    expect(receivedWith(`Fresh ${t.name}`)).toHaveLength(0);
  });
});
