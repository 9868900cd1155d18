import type { MethodArgs, MethodContext } from '@quire/apps';
import { flushEmailQueue } from '@quire/email';

/**
 * frappe.email.queue.flush: sends the site's due Email Queue rows (a background job: the `all`
 * scheduler event, and enqueued by every new Email Queue row so a password reset does not wait
 * for the tick). Through the site's outgoing Email Account, else the platform's SMTP_URL.
 */
export async function flush(_kwargs: MethodArgs, ctx: MethodContext): Promise<void> {
  await flushEmailQueue(ctx.doc, { defaultSmtpUrl: ctx.settings.defaultSmtpUrl, siteUrl: ctx.siteUrl });
}
