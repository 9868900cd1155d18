import type { MethodContext } from '@quire/apps';
import { publishRealtime } from '@quire/documents';
import { ValidationError } from '@quire/errors';
import { decodeJsonArg } from '@quire/frappe-compat';

/**
 * What the desk's bulk actions (delete_items, submit_cancel_or_update_docs) share: the list of
 * names they are given, and how they tell the user how it went. A call answered at once tells in
 * the answer's `_server_messages`; a background job has no answer, so it tells the user's sockets
 * (Frappe's `msgprint(..., realtime=True)`: the `msgprint` event, to that user).
 */

/** Where a bulk action's messages go: the answer, or the user's sockets when it runs as a job. */
export type MessageSink = (message: string, title: string) => void;

export function answerSink(ctx: MethodContext): MessageSink {
  return (message, title) => ctx.response.msgprint(message, title);
}

export function realtimeSink(ctx: MethodContext): MessageSink {
  return (message, title) => publishRealtime(ctx.doc, 'msgprint', { message, title }, { user: ctx.doc.principal.user });
}

/** Frappe's `progress` event to the caller's sockets (its desk draws a progress bar from it). */
export function publishProgress(ctx: MethodContext, message: Record<string, unknown>): void {
  publishRealtime(ctx.doc, 'progress', message, { user: ctx.doc.principal.user });
}

/** A list of document names (a JSON list or its text); names are text or numbers (autoincrement). */
export function namesArg(name: string, value: unknown): Array<string | number> {
  if (value === undefined || value === null || value === '') throw new ValidationError(`${name} is required`, { title: 'Missing Argument' });
  const list = decodeJsonArg(name, value);
  if (!Array.isArray(list) || list.some((n) => (typeof n !== 'string' || n === '') && typeof n !== 'number')) {
    throw new ValidationError(`${name} must be a JSON list of document names`, { title: 'Invalid Request' });
  }
  return list as Array<string | number>;
}

export function doctypeArg(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new ValidationError('doctype is required', { title: 'Missing Argument' });
  return value;
}
