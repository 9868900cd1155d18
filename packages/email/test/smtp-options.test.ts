import { describe, expect, it } from 'vitest';
import { smtpOptionsFromUrl, smtpOptionsOf, type EmailAccount } from '../src/index';

/** The two ways to name a mail server, down to nodemailer's options. */

const account = (fields: Partial<EmailAccount>): EmailAccount => ({
  name: 'Support',
  email_id: 'support@acme.test',
  enable_outgoing: 1,
  default_outgoing: 1,
  smtp_server: 'smtp.acme.test',
  smtp_port: 0,
  use_tls: 0,
  use_ssl_for_outgoing: 0,
  login_id: null,
  no_smtp_authentication: 0,
  always_use_account_email_id_as_sender: 0,
  password: undefined,
  ...fields,
});

describe('smtpOptionsFromUrl', () => {
  it('smtps is implicit TLS on 465; user and password are percent-decoded', () => {
    expect(smtpOptionsFromUrl('smtps://me%40acme.test:p%40ss%3Aw%2Frd@mail.acme.test')).toMatchObject({
      host: 'mail.acme.test',
      port: 465,
      secure: true,
      requireTLS: false,
      auth: { user: 'me@acme.test', pass: 'p@ss:w/rd' },
    });
  });

  it('smtp is port 25 with STARTTLS when offered; starttls=required is 587 and must upgrade; starttls=never never does', () => {
    expect(smtpOptionsFromUrl('smtp://mail.acme.test')).toMatchObject({ port: 25, secure: false, requireTLS: false, ignoreTLS: false });
    expect(smtpOptionsFromUrl('smtp://mail.acme.test?starttls=required')).toMatchObject({ port: 587, requireTLS: true });
    expect(smtpOptionsFromUrl('smtp://mail.acme.test:2525?starttls=never')).toMatchObject({ port: 2525, ignoreTLS: true });
    expect(smtpOptionsFromUrl('smtp://mail.acme.test').auth).toBeUndefined();
    expect(smtpOptionsFromUrl('smtp://[::1]:2525').host).toBe('::1');
  });

  it('every connection gives up within seconds, pooled, one try per send', () => {
    expect(smtpOptionsFromUrl('smtp://mail.acme.test')).toMatchObject({
      pool: true,
      maxRequeues: 0,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 60_000,
    });
  });

  it('the CA to trust and rejectUnauthorized reach tls; nothing is set when not given', () => {
    expect(smtpOptionsFromUrl('smtps://mail.acme.test', { ca: 'PEM', rejectUnauthorized: false }).tls).toEqual({ ca: 'PEM', rejectUnauthorized: false });
    expect(smtpOptionsFromUrl('smtps://mail.acme.test').tls).toBeUndefined();
  });

  it('anything else is an OutgoingEmailError that never quotes the password', () => {
    for (const url of [
      'mail.acme.test',
      'http://mail.acme.test',
      'smtp://u:hunter2@mail.acme.test?starttls=maybe',
      'smtp://u:hunter2@h?from=x',
      'smtps://u:hunter2@h?starttls=required',
    ]) {
      let error: unknown;
      try {
        smtpOptionsFromUrl(url);
      } catch (e) {
        error = e;
      }
      expect(error, url).toMatchObject({ name: 'OutgoingEmailError' });
      expect((error as Error).message).not.toContain('hunter2');
    }
  });
});

describe('smtpOptionsOf (an Email Account)', () => {
  it('Use SSL is implicit TLS on 465, Use TLS is STARTTLS required on 587, neither is plain text on 25, as Frappe sends', () => {
    expect(smtpOptionsOf(account({ use_ssl_for_outgoing: 1 }))).toMatchObject({ host: 'smtp.acme.test', port: 465, secure: true });
    expect(smtpOptionsOf(account({ use_tls: 1 }))).toMatchObject({ port: 587, secure: false, requireTLS: true });
    expect(smtpOptionsOf(account({}))).toMatchObject({ port: 25, secure: false, ignoreTLS: true });
    expect(smtpOptionsOf(account({ use_tls: 1, smtp_port: 2587 })).port).toBe(2587);
  });

  it('logs in as login_id, else email_id, only with a password and authentication on', () => {
    expect(smtpOptionsOf(account({ password: 'pw' })).auth).toEqual({ user: 'support@acme.test', pass: 'pw' });
    expect(smtpOptionsOf(account({ password: 'pw', login_id: 'AKIA123' })).auth).toEqual({ user: 'AKIA123', pass: 'pw' });
    expect(smtpOptionsOf(account({ password: 'pw', no_smtp_authentication: 1 })).auth).toBeUndefined();
    expect(smtpOptionsOf(account({})).auth).toBeUndefined();
  });
});
