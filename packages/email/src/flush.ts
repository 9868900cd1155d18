import type { DocContext } from '@quire/documents';
import { formatDatetime } from '@quire/meta';
import { mailOf, messageIdOf } from './message';
import { OutgoingAccounts, type Outgoing } from './outgoing';
import { claimNextEmail, countDueWithoutAccount, markFailed, markSent, releaseClaim, type ClaimedEmail } from './queue-rows';
import { retryDelayMs, SENDING_LEASE_MS } from './retry-policy';
import { noreplyAddress, senderOf } from './sender';
import { Transports } from './transports';

/**
 * Sending a tenant's Email Queue (Frappe's flush): each due row is claimed (committed) before it
 * is sent, so however many workers flush at once a row goes out once; then it is Sent, or its
 * failure is counted and it waits for the next attempt, up to three.
 */

export interface EmailFlushOptions {
  /** The platform's mail server (SMTP_URL, see smtp-url.ts) for a tenant without an outgoing Email Account. */
  defaultSmtpUrl?: string | undefined;
  /** The From address when neither the row nor its account gives one; `noreply@<siteUrl's host>` otherwise. */
  defaultSender?: string | undefined;
  /** The tenant's own URL (Platform.siteUrl), for that `noreply@` address. */
  siteUrl?: string | undefined;
  /** The time to act at (send_after, retry waits, the lease); the clock otherwise. */
  now?: Date | undefined;
  /** Most rows one flush takes (100). */
  limit?: number | undefined;
  /** false accepts any certificate from the mail server (a self-signed relay); true by default. */
  tlsRejectUnauthorized?: boolean | undefined;
  /** CA certificates (PEM) to trust besides the system's. */
  tlsCa?: string | Buffer | Array<string | Buffer> | undefined;
}

export interface EmailFlushSummary {
  /** Delivered to the mail server: now Sent. */
  sent: number;
  /** Attempts that failed: back to Not Sent for a later attempt, or Error after the third. */
  failed: number;
  /**
   * Due rows left Not Sent without an attempt: no outgoing server for them (no Email Account named,
   * no default outgoing account, no platform server), or their server already failed in this flush.
   */
  deferred: number;
}

/** What happened to one row: sent, failed, left for later without an attempt, or not due (nothing to do). */
export type EmailSendOutcome = 'sent' | 'failed' | 'deferred' | 'not due';

const DEFAULT_LIMIT = 100;

/**
 * nodemailer's codes for a server that could not be used at all (unreachable, TLS, login): the
 * rest of its rows in this flush are left for the next one rather than each waiting out the
 * same failure.
 */
const SERVER_FAILURES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'EAUTH', 'ENOAUTH', 'EPROXY', 'ECONFIG']);

/** Sends the tenant's due emails, oldest first. Call it outside a transaction: each claim must commit before its send. */
export async function flushEmailQueue(ctx: DocContext, options: EmailFlushOptions = {}): Promise<EmailFlushSummary> {
  const flush = new Flush(ctx, options);
  try {
    return await flush.run();
  } finally {
    flush.close();
  }
}

/** Sends one Email Queue row if it is due, by the same claim as a flush. */
export async function sendQueuedEmail(ctx: DocContext, name: string, options: EmailFlushOptions = {}): Promise<EmailSendOutcome> {
  const flush = new Flush(ctx, options);
  try {
    return await flush.one(name);
  } finally {
    flush.close();
  }
}

function datetime(at: Date): string {
  return formatDatetime(at.getTime() * 1000);
}

function errorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && !e.message.includes(code) ? `${code}: ${e.message}` : e.message;
}

function isServerFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && SERVER_FAILURES.has(code);
}

class Flush {
  private readonly accounts: OutgoingAccounts;
  private readonly transports = new Transports();
  /** Servers that failed in this flush, by key. */
  private readonly failedServers = new Set<string>();
  /** Rows let go of in this flush, not to be claimed again by it. */
  private readonly released: string[] = [];
  private readonly fallbackSender: string;

  constructor(
    private readonly ctx: DocContext,
    private readonly options: EmailFlushOptions,
  ) {
    // A transaction would keep every claim uncommitted, invisible to the other workers, while sending.
    if ('defer' in ctx.db) throw new Error('flushEmailQueue must run outside a transaction');
    const trust = {
      ...(options.tlsCa !== undefined ? { ca: options.tlsCa } : {}),
      ...(options.tlsRejectUnauthorized !== undefined ? { rejectUnauthorized: options.tlsRejectUnauthorized } : {}),
    };
    this.accounts = new OutgoingAccounts(ctx, options.defaultSmtpUrl, trust);
    this.fallbackSender = options.defaultSender ?? noreplyAddress(options.siteUrl);
  }

  async run(): Promise<EmailFlushSummary> {
    const summary: EmailFlushSummary = { sent: 0, failed: 0, deferred: 0 };
    const namedAccountOnly = (await this.accounts.fallback()) === undefined;
    const limit = this.options.limit ?? DEFAULT_LIMIT;
    for (let taken = 0; taken < limit; taken++) {
      const email = await claimNextEmail(this.ctx, { ...this.clock(), namedAccountOnly, exclude: this.released });
      if (!email) break;
      summary[await this.send(email)]++;
    }
    if (namedAccountOnly) {
      const { now, leaseCutoff } = this.clock();
      summary.deferred += await countDueWithoutAccount(this.ctx, now, leaseCutoff);
    }
    return summary;
  }

  async one(name: string): Promise<EmailSendOutcome> {
    const namedAccountOnly = (await this.accounts.fallback()) === undefined;
    const email = await claimNextEmail(this.ctx, { ...this.clock(), namedAccountOnly, exclude: [], name });
    if (email) return this.send(email);
    if (!namedAccountOnly) return 'not due';
    const { now, leaseCutoff } = this.clock();
    return (await countDueWithoutAccount(this.ctx, now, leaseCutoff, name)) > 0 ? 'deferred' : 'not due';
  }

  close(): void {
    this.transports.close();
  }

  private clock(): { now: string; leaseCutoff: string } {
    const at = this.options.now ?? new Date();
    return { now: datetime(at), leaseCutoff: datetime(new Date(at.getTime() - SENDING_LEASE_MS)) };
  }

  private async send(email: ClaimedEmail): Promise<'sent' | 'failed' | 'deferred'> {
    let outgoing: Outgoing | undefined;
    try {
      outgoing = await this.accounts.of(email.email_account);
    } catch (e) {
      await this.fail(email, e);
      return 'failed';
    }
    // The default account was removed since the flush began, or its server already failed: next time.
    if (!outgoing || this.failedServers.has(outgoing.key)) {
      await releaseClaim(this.ctx, email);
      this.released.push(email.name);
      return 'deferred';
    }
    const from = senderOf(email.sender, outgoing, this.fallbackSender);
    let messageId: string;
    try {
      messageId = await this.transports.send(outgoing, mailOf(email, from));
    } catch (e) {
      if (isServerFailure(e)) this.failedServers.add(outgoing.key);
      await this.fail(email, e);
      return 'failed';
    }
    // Outside the try: the email is out; a failure to record it must not count as a failed send.
    await markSent(this.ctx, email, messageId || messageIdOf(email, from), this.clock().now);
    return 'sent';
  }

  private async fail(email: ClaimedEmail, e: unknown): Promise<void> {
    const at = this.options.now ?? new Date();
    const next = datetime(new Date(at.getTime() + retryDelayMs(email.retry + 1)));
    await markFailed(this.ctx, email, errorText(e), datetime(at), next);
  }
}
