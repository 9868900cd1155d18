import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { DocContext } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { SMTPServer, type SMTPServerAuthentication } from 'smtp-server';
import { expect } from 'vitest';
import type { TestServer, TestTenant } from '../support/server';

/**
 * A real SMTP server on a free port (the nodemailer project's smtp-server) that keeps what it
 * receives, TLS certificates made with openssl, and the Email Queue as the tests read it.
 */

export interface ReceivedMail {
  /** The envelope: MAIL FROM and RCPT TO. */
  from: string;
  to: string[];
  /** The login the client used, if any. */
  user: string | undefined;
  /** Whether the session was encrypted (implicit TLS or after STARTTLS). */
  secure: boolean;
  headers: Record<string, string>;
  subject: string;
  /** The body, its transfer encoding undone. */
  body: string;
}

export interface SmtpSink {
  port: number;
  /** `smtp://127.0.0.1:<port>` (add a user for servers that ask for a login). */
  url: string;
  received: ReceivedMail[];
  /** Logins tried: user and password. */
  logins: Array<{ user: string; password: string }>;
  /** Connections clients opened. */
  connections(): number;
  close(): Promise<void>;
}

export interface SinkOptions {
  /** `implicit`: TLS from the first byte; `starttls`: plain, offering STARTTLS; `none` (default): no TLS at all. */
  tls?: 'implicit' | 'starttls' | 'none';
  certificate?: Certificate;
  /** Accepts this login (others are refused); without it and without `refuse`, no login is asked for. */
  login?: { user: string; password: string };
  /** Refuses every login with this message (535). */
  refuse?: string;
  /** Milliseconds each message takes to be accepted (so that concurrent senders overlap). */
  delayMs?: number;
}

export async function startSmtpSink(options: SinkOptions = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const logins: SmtpSink['logins'] = [];
  let connections = 0;
  const tls = options.tls ?? 'none';
  const asksLogin = options.login !== undefined || options.refuse !== undefined;
  const server = new SMTPServer({
    logger: false,
    secure: tls === 'implicit',
    ...(options.certificate ? { key: options.certificate.key, cert: options.certificate.cert } : {}),
    disabledCommands: tls === 'none' ? ['STARTTLS'] : [],
    authOptional: !asksLogin,
    allowInsecureAuth: true,
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onAuth(auth: SMTPServerAuthentication, _session, callback) {
      const user = auth.username ?? '';
      const password = auth.password ?? '';
      logins.push({ user, password });
      if (options.refuse !== undefined) callback(new Error(options.refuse));
      else if (options.login && (user !== options.login.user || password !== options.login.password)) callback(new Error('Invalid username or password'));
      else callback(null, { user });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mailFrom = session.envelope.mailFrom;
        received.push({
          from: mailFrom === false ? '' : mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          secure: session.secure,
          ...parseMessage(Buffer.concat(chunks).toString('utf8')),
        });
        setTimeout(() => callback(), options.delayMs ?? 0);
      });
    },
  });
  // A client that drops the connection (refusing our certificate, say) is an 'error' event, not a failure of the test.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    logins,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Headers (unfolded, lower-case names) and the body with its quoted-printable or base64 undone. */
function parseMessage(raw: string): Pick<ReceivedMail, 'headers' | 'subject' | 'body'> {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const encoded = raw.slice(split + 4);
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  const body =
    encoding === 'quoted-printable'
      ? Buffer.from(
          encoded.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
          'latin1',
        ).toString('utf8')
      : encoding === 'base64'
        ? Buffer.from(encoded, 'base64').toString('utf8')
        : encoded;
  return { headers, subject: headers.subject ?? '', body: body.replace(/\r\n/g, '\n') };
}

export interface Certificate {
  key: string;
  cert: string;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with the openssl CLI; it is its own CA. */
export function selfSignedCertificate(): Certificate {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-smtp-tls-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const ADMIN = makePrincipal('Administrator', ['Administrator', 'System Manager']);

/** The context a worker flushes a tenant's queue with (the platform's, as the Administrator). */
export async function contextOf(server: TestServer, t: TestTenant): Promise<DocContext> {
  const tenant = server.platform.tenants.get(t.name);
  if (!tenant) throw new Error(`no tenant ${t.name}`);
  return server.platform.context(tenant, ADMIN);
}

/** Queues an email through the record API; answers its name. */
export async function queueEmail(t: TestTenant, fields: Record<string, unknown>): Promise<string> {
  const res = await t.call('POST', '/api/resource/Email Queue', { json: { recipients: 'to@example.com', subject: 'Hello', message: 'Hi there', ...fields } });
  expect(res.status, res.text).toBe(200);
  return res.body.data.name;
}

export interface QueueRow {
  status: string;
  retry: number;
  error: string | null;
  send_after: string | null;
  message_id: string | null;
}

export async function queueRow(server: TestServer, t: TestTenant, name: string): Promise<QueueRow> {
  const { rows } = await server.db.query<QueueRow>(
    `SELECT "status", "retry", "error", "send_after", "message_id" FROM "${t.schema}"."tabEmail Queue" WHERE "name" = $1`,
    [name],
  );
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/** An Email Account through the record API (outgoing on, this sink's server); answers the stored document. */
export async function createEmailAccount(t: TestTenant, sink: Pick<SmtpSink, 'port'>, fields: Record<string, unknown>): Promise<any> {
  const res = await t.call('POST', '/api/resource/Email Account', {
    json: { enable_outgoing: 1, smtp_server: '127.0.0.1', smtp_port: sink.port, ...fields },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

export const minutesAfter = (at: Date, minutes: number): Date => new Date(at.getTime() + minutes * 60_000);
