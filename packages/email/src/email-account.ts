import { getPassword, type DocContext } from '@quire/documents';
import { smtpOptions, type SmtpOptions, type SmtpSecurity, type SmtpTlsTrust } from './smtp-options';

/** The outgoing side of an Email Account row, Frappe's field names, with its password decrypted. */
export interface EmailAccount {
  name: string;
  email_id: string;
  enable_outgoing: number;
  default_outgoing: number;
  smtp_server: string | null;
  smtp_port: number | null;
  /** STARTTLS. */
  use_tls: number;
  /** Implicit TLS. */
  use_ssl_for_outgoing: number;
  /** The login when it is not `email_id`. */
  login_id: string | null;
  no_smtp_authentication: number;
  always_use_account_email_id_as_sender: number;
  /** The Password field's value (decrypted from `__Auth`); undefined when none is stored. */
  password: string | undefined;
}

const COLUMNS = [
  'name',
  'email_id',
  'enable_outgoing',
  'default_outgoing',
  'smtp_server',
  'smtp_port',
  'use_tls',
  'use_ssl_for_outgoing',
  'login_id',
  'no_smtp_authentication',
  'always_use_account_email_id_as_sender',
]
  .map((c) => `"${c}"`)
  .join(', ');

type AccountRow = Omit<EmailAccount, 'password'>;

async function withPassword(ctx: Pick<DocContext, 'db' | 'tenant' | 'secrets'>, row: AccountRow): Promise<EmailAccount> {
  return { ...row, password: await getPassword(ctx, 'Email Account', row.name, 'password') };
}

/** An Email Account by name, or undefined. */
export async function readEmailAccount(ctx: Pick<DocContext, 'db' | 'tenant' | 'meta' | 'secrets'>, name: string): Promise<EmailAccount | undefined> {
  const { rows } = await ctx.db.query<AccountRow>(`SELECT ${COLUMNS} FROM ${ctx.meta.require('Email Account').table} WHERE "name" = $1`, [name]);
  const row = rows[0];
  return row ? withPassword(ctx, row) : undefined;
}

/** The tenant's default outgoing account (enabled and marked default), or undefined. */
export async function defaultOutgoingAccount(ctx: Pick<DocContext, 'db' | 'tenant' | 'meta' | 'secrets'>): Promise<EmailAccount | undefined> {
  const { rows } = await ctx.db.query<AccountRow>(
    `SELECT ${COLUMNS} FROM ${ctx.meta.require('Email Account').table}
     WHERE "enable_outgoing" = 1 AND "default_outgoing" = 1 ORDER BY "modified" DESC LIMIT 1`,
  );
  const row = rows[0];
  return row ? withPassword(ctx, row) : undefined;
}

/** Frappe's: SSL wins (nothing is left to upgrade), then TLS; neither is plain text as Frappe's smtplib sends it. */
function securityOf(account: EmailAccount): SmtpSecurity {
  if (account.use_ssl_for_outgoing) return 'tls';
  return account.use_tls ? 'starttls' : 'none';
}

/**
 * nodemailer's transport options for an Email Account: its server and port (the security's usual
 * port when empty), and a login (`login_id`, else `email_id`) when it has a password and
 * authentication is not switched off.
 */
export function smtpOptionsOf(account: EmailAccount, trust: SmtpTlsTrust = {}): SmtpOptions {
  const login = account.login_id?.trim() || account.email_id;
  const authenticate = !account.no_smtp_authentication && account.password !== undefined && account.password !== '';
  return smtpOptions(
    {
      host: (account.smtp_server ?? '').trim(),
      port: account.smtp_port || undefined,
      security: securityOf(account),
      auth: authenticate ? { user: login, pass: account.password ?? '' } : undefined,
    },
    trust,
  );
}
