import type { DocContext } from '@quire/documents';
import { OutgoingEmailError } from '@quire/errors';
import { defaultOutgoingAccount, readEmailAccount, smtpOptionsOf, type EmailAccount } from './email-account';
import type { SmtpOptions, SmtpTlsTrust } from './smtp-options';
import { smtpOptionsFromUrl } from './smtp-url';

/** A server an email can go out through, and the address that goes with it. */
export interface Outgoing {
  /** Same key, same server: one transport per key per flush. */
  key: string;
  options: SmtpOptions;
  /** The account's own address (none for the platform's server). */
  email: string | undefined;
  alwaysAsSender: boolean;
}

function fromAccount(account: EmailAccount, trust: SmtpTlsTrust): Outgoing {
  return {
    key: `account:${account.name}`,
    options: smtpOptionsOf(account, trust),
    email: account.email_id,
    alwaysAsSender: account.always_use_account_email_id_as_sender === 1,
  };
}

/**
 * Which server sends a row, looked up once per flush: the row's Email Account when it names one
 * (it must exist and have outgoing enabled), else the tenant's default outgoing account, else the
 * platform's server (SMTP_URL), else none.
 */
export class OutgoingAccounts {
  private readonly named = new Map<string, Promise<Outgoing>>();
  private fallbackServer: Promise<Outgoing | undefined> | undefined;

  constructor(
    private readonly ctx: Pick<DocContext, 'db' | 'tenant' | 'meta' | 'secrets'>,
    private readonly platformUrl: string | undefined,
    private readonly trust: SmtpTlsTrust,
  ) {}

  /** The server for rows that name no account; undefined when there is none. */
  fallback(): Promise<Outgoing | undefined> {
    this.fallbackServer ??= this.findFallback();
    return this.fallbackServer;
  }

  /** The server for a row; throws OutgoingEmailError when the account it names cannot send. */
  async of(accountName: string | null): Promise<Outgoing | undefined> {
    if (!accountName) return this.fallback();
    let outgoing = this.named.get(accountName);
    if (!outgoing) this.named.set(accountName, (outgoing = this.findNamed(accountName)));
    return outgoing;
  }

  private async findFallback(): Promise<Outgoing | undefined> {
    const account = await defaultOutgoingAccount(this.ctx);
    if (account) return fromAccount(account, this.trust);
    if (!this.platformUrl) return undefined;
    return { key: 'platform', options: smtpOptionsFromUrl(this.platformUrl, this.trust), email: undefined, alwaysAsSender: false };
  }

  private async findNamed(name: string): Promise<Outgoing> {
    const account = await readEmailAccount(this.ctx, name);
    if (!account) throw new OutgoingEmailError(`Email Account ${name} not found`);
    if (!account.enable_outgoing) throw new OutgoingEmailError(`Email Account ${name} does not have outgoing enabled`);
    return fromAccount(account, this.trust);
  }
}
