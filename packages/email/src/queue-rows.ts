import type { DocContext } from '@quire/documents';
import type { QueuedEmail } from './message';
import { MAX_ATTEMPTS } from './retry-policy';

/**
 * Email Queue status changes, each one atomic statement committed on its own: a claim (Not Sent,
 * or Sending past its lease, to Sending) before the send, then Sent, or a failure counted. A claim
 * writes `modified`, and the writes after the send only apply while it is still there, so a
 * process whose claim was taken over (it outlived the lease) cannot overwrite the new owner's
 * outcome. `setValues` is not used here because each of these writes is conditional on the row's
 * current state.
 */

type Ctx = Pick<DocContext, 'db' | 'meta'>;

export interface ClaimedEmail extends QueuedEmail {
  email_account: string | null;
  /** Failed attempts before this one. */
  retry: number;
  /** What the claim wrote to `modified`: the claim's token. */
  modified: string;
}

const CLAIMED = ['name', 'sender', 'recipients', 'subject', 'message', 'message_id', 'email_account', 'retry', 'modified'].map((c) => `"${c}"`).join(', ');

export interface ClaimFilter {
  /** The time of the claim (Frappe's naive UTC datetime text). */
  now: string;
  /** Rows in Sending claimed before this are taken again. */
  leaseCutoff: string;
  /** Only rows naming their Email Account (when nothing else could send the others). */
  namedAccountOnly: boolean;
  /** Rows this flush already let go of. */
  exclude: readonly string[];
  /** Only this row. */
  name?: string | undefined;
}

const table = (ctx: Ctx) => ctx.meta.require('Email Queue').table;

/** Due: Not Sent and its send_after past, or Sending past the lease. */
const DUE = `(("status" = 'Not Sent' AND ("send_after" IS NULL OR "send_after" <= $1::timestamp)) OR ("status" = 'Sending' AND "modified" < $2::timestamp))`;

const NAMES_ACCOUNT = `COALESCE("email_account", '') <> ''`;

/**
 * Takes the oldest due row for this process, or undefined when there is none. Rows another process
 * is claiming at the same moment are skipped, not waited for (SKIP LOCKED), and a row another
 * process claimed first no longer matches: each row is claimed by exactly one.
 */
export async function claimNextEmail(ctx: Ctx, filter: ClaimFilter): Promise<ClaimedEmail | undefined> {
  const values: unknown[] = [filter.now, filter.leaseCutoff, filter.exclude];
  let only = '';
  if (filter.namedAccountOnly) only += ` AND ${NAMES_ACCOUNT}`;
  if (filter.name !== undefined) {
    values.push(filter.name);
    only += ` AND "name" = $${values.length}`;
  }
  const t = table(ctx);
  const { rows } = await ctx.db.query<ClaimedEmail>(
    `UPDATE ${t} SET "status" = 'Sending', "modified" = $1::timestamp
     WHERE "name" = (
       SELECT "name" FROM ${t}
       WHERE ${DUE} AND NOT ("name" = ANY($3::text[]))${only}
       ORDER BY "creation", "name"
       LIMIT 1
       FOR UPDATE SKIP LOCKED)
     RETURNING ${CLAIMED}`,
    values,
  );
  return rows[0];
}

/** Due rows that name no Email Account (left Not Sent when the tenant and platform have no server). */
export async function countDueWithoutAccount(ctx: Ctx, now: string, leaseCutoff: string, name?: string): Promise<number> {
  const values: unknown[] = [now, leaseCutoff];
  if (name !== undefined) values.push(name);
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS "n" FROM ${table(ctx)} WHERE ${DUE} AND NOT ${NAMES_ACCOUNT}${name !== undefined ? ' AND "name" = $3' : ''}`,
    values,
  );
  return rows[0]?.n ?? 0;
}

/** Sent, with the Message-ID it went out with. */
export async function markSent(ctx: Ctx, email: ClaimedEmail, messageId: string, now: string): Promise<void> {
  await ctx.db.query(
    `UPDATE ${table(ctx)} SET "status" = 'Sent', "message_id" = $1, "modified" = $2::timestamp
     WHERE "name" = $3 AND "status" = 'Sending' AND "modified" = $4::timestamp`,
    [messageId, now, email.name, email.modified],
  );
}

/**
 * A failed attempt: counted in `retry`, the error kept; back to Not Sent until `nextAttempt`, or
 * Error once it was the last attempt. Answers the status the row is left in.
 */
export async function markFailed(ctx: Ctx, email: ClaimedEmail, error: string, now: string, nextAttempt: string): Promise<'Not Sent' | 'Error'> {
  const status = email.retry + 1 >= MAX_ATTEMPTS ? 'Error' : 'Not Sent';
  await ctx.db.query(
    `UPDATE ${table(ctx)} SET "status" = $1, "retry" = "retry" + 1, "error" = $2, "send_after" = COALESCE($3::timestamp, "send_after"), "modified" = $4::timestamp
     WHERE "name" = $5 AND "status" = 'Sending' AND "modified" = $6::timestamp`,
    [status, error, status === 'Error' ? null : nextAttempt, now, email.name, email.modified],
  );
  return status;
}

/** Back to Not Sent without an attempt counted (its server already failed in this flush). */
export async function releaseClaim(ctx: Ctx, email: ClaimedEmail): Promise<void> {
  await ctx.db.query(`UPDATE ${table(ctx)} SET "status" = 'Not Sent' WHERE "name" = $1 AND "status" = 'Sending' AND "modified" = $2::timestamp`, [
    email.name,
    email.modified,
  ]);
}
