import type { SMTPPoolOptions } from 'nodemailer';

/**
 * nodemailer's options for one outgoing server, pooled (one connection reused for a flush's
 * batch). What every server gets alike lives here: timeouts short enough that a dead or silent
 * server fails the attempt instead of holding a worker, and one try per send (a retry is the
 * Email Queue's, counted in its `retry`).
 */
export type SmtpOptions = SMTPPoolOptions & { pool: true };

/** Which certificates a TLS connection to the mail server accepts: the system's CAs by default. */
export interface SmtpTlsTrust {
  /** Extra CA certificates (PEM) to trust, e.g. a private relay's. */
  ca?: string | Buffer | Array<string | Buffer> | undefined;
  /** false accepts any certificate (a self-signed relay nobody gave the CA of); true by default. */
  rejectUnauthorized?: boolean | undefined;
}

/** How the connection is protected: implicit TLS, STARTTLS required, STARTTLS when offered, or never. */
export type SmtpSecurity = 'tls' | 'starttls' | 'opportunistic' | 'none';

export interface SmtpServer {
  host: string;
  /** The security's usual port when absent: 465 for `tls`, 587 for `starttls`, 25 otherwise. */
  port?: number | undefined;
  security: SmtpSecurity;
  /** Login and password; absent, no AUTH is attempted. */
  auth?: { user: string; pass: string } | undefined;
}

/** Connect, greeting and DNS: 10 s each; a stalled exchange after that: 60 s. */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, dnsTimeout: 10_000, socketTimeout: 60_000 } as const;

export function defaultPort(security: SmtpSecurity): number {
  return security === 'tls' ? 465 : security === 'starttls' ? 587 : 25;
}

export function smtpOptions(server: SmtpServer, trust: SmtpTlsTrust = {}): SmtpOptions {
  const tls = {
    ...(trust.ca !== undefined ? { ca: trust.ca } : {}),
    ...(trust.rejectUnauthorized !== undefined ? { rejectUnauthorized: trust.rejectUnauthorized } : {}),
  };
  return {
    pool: true,
    maxConnections: 1,
    maxRequeues: 0,
    host: server.host,
    port: server.port ?? defaultPort(server.security),
    secure: server.security === 'tls',
    requireTLS: server.security === 'starttls',
    ignoreTLS: server.security === 'none',
    ...(server.auth ? { auth: { user: server.auth.user, pass: server.auth.pass } } : {}),
    ...(Object.keys(tls).length > 0 ? { tls } : {}),
    ...SMTP_TIMEOUTS,
  };
}
