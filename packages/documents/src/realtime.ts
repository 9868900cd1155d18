import type { RealtimeTarget, Transaction } from '@quire/db';
import type { DocContext } from './context';

/**
 * Frappe's publish_realtime for apps: sockets of the target hear `event` with `message` — one
 * user's (`{ user }`), a DocType's subscribers (`{ doctype }`), a document's (`{ doctype, docname }`),
 * a named room (`{ room }`), or every signed-in desk user of the tenant (no target). Given
 * `afterCommit`, the message goes only once that transaction commits (never for a rolled-back change).
 */
export function publishRealtime(
  ctx: DocContext,
  event: string,
  message: unknown,
  target: RealtimeTarget = {},
  options: { afterCommit?: Transaction } = {},
): void {
  ctx.changes.publishRealtime(options.afterCommit, ctx.tenant, { event, message, target });
}
