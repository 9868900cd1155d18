import { whitelist, type MethodArgs, type MethodContext } from '@quire/apps';
import { deleteDoc } from '@quire/documents';
import { FrappeError, PermissionError, ValidationError } from '@quire/errors';
import { checkPermission, grantsOf } from '@quire/permissions';
import { answerSink, doctypeArg, namesArg, publishProgress, realtimeSink, type MessageSink } from './bulk_messages';
import { exportQuery } from './reportview_export';

/**
 * frappe.desk.reportview: what a list's selection does (delete_items) and its export
 * (export_query, in reportview_export.ts).
 *
 * delete_items(doctype, items): each named document is deleted through the one delete path
 * (@quire/documents deleteDoc: the caller's delete permission on it, refused when submitted
 * ("cancel it first") or linked (LinkExistsError)), each in its own transaction, so that one
 * refusal leaves the others deleted. As in Frappe, the documents that failed are tried again
 * while a pass deletes some (one may have been linked only from another one of the selection).
 *
 * What a client sees, as Frappe's current source answers: `message` is the list of names that
 * could not be deleted (`[]` when all went); `_server_messages` carries why each failed (the
 * refusal's own message) and then "Failed to delete {n} documents: {names}" (title "Bulk
 * Operation Failed"), or "Deleted {n} records from {doctype} doctype" (title "Bulk Operation
 * Successful"). Frappe sends that last message over its realtime socket; an answered call here
 * carries it in the answer, where a client that only calls the API sees it too.
 *
 * More than 10 names: as in Frappe, the deletion is a background job (delete_bulk, on the
 * default queue) and the call answers nothing; the job tells the user's sockets `progress`
 * ({progress: [done, total], title, description}) as it goes and a `msgprint` at the end. A caller
 * without the delete right on the DocType at all gets a 403 before anything is deleted or enqueued.
 */

/** Frappe's threshold: above it, delete_items runs as a job. */
const DELETE_INLINE_MAX = 10;
/** Names one call may send: the job carries them as its arguments. */
const DELETE_MAX = 10_000;
/** Seconds the deletion job may run (the default queue's 300 would not be enough for thousands). */
const DELETE_JOB_TIMEOUT = 1_500;
/** Frappe publishes progress only for batches of at least this many. */
const PROGRESS_MIN = 5;

type Name = string | number;

/** Frappe deletes in reverse sorted order (names of later documents first); a name sent twice is deleted once. */
function sortedForDelete(items: Name[]): Name[] {
  const numeric = items.every((n) => typeof n === 'number');
  return [...new Set(items)].sort((a, b) => (numeric ? Number(b) - Number(a) : String(b) < String(a) ? -1 : String(b) > String(a) ? 1 : 0));
}

/** Deletes each document in its own transaction; answers the names that could not be deleted. */
async function deleteEach(ctx: MethodContext, doctype: string, items: Name[], tell: MessageSink): Promise<Name[]> {
  let pending = items;
  let done = 0;
  let refusals: Map<Name, FrappeError>;
  for (;;) {
    refusals = new Map();
    for (const name of pending) {
      try {
        await deleteDoc(ctx.doc, doctype, name);
        done += 1;
        if (items.length >= PROGRESS_MIN) publishProgress(ctx, { progress: [done, items.length], title: `Deleting ${doctype}`, description: String(name) });
      } catch (e) {
        if (!(e instanceof FrappeError)) throw e;
        refusals.set(name, e);
      }
    }
    // None left, or a pass that deleted nothing: trying again would refuse the same way.
    if (refusals.size === 0 || refusals.size === pending.length) break;
    pending = [...refusals.keys()];
  }
  const failed = [...refusals.keys()];
  if (failed.length > 0) {
    for (const e of refusals.values()) tell(e.message, e.title ?? 'Message');
    tell(`Failed to delete ${failed.length} documents: ${failed.map(String).join(', ')}`, 'Bulk Operation Failed');
  } else {
    tell(`Deleted ${items.length} records from ${doctype} doctype`, 'Bulk Operation Successful');
  }
  return failed;
}

/** delete_items(doctype, items): see the module comment. POST or DELETE. */
export const delete_items = whitelist(
  async (args, ctx) => {
    const meta = ctx.doc.meta.require(doctypeArg(args.doctype));
    // The right on the DocType first (a caller who may delete none of its documents gets a 403, not a list of failures).
    checkPermission(meta, ctx.doc.principal, 'delete');
    const items = sortedForDelete(namesArg('items', args.items));
    if (items.length > DELETE_MAX) throw new ValidationError(`Only ${DELETE_MAX} documents can be deleted at once`, { title: 'Too Many Documents' });
    if (items.length > DELETE_INLINE_MAX) {
      await ctx.enqueue('frappe.desk.reportview.delete_bulk', { kwargs: { doctype: meta.name, items }, timeout: DELETE_JOB_TIMEOUT });
      return undefined;
    }
    return deleteEach(ctx, meta.name, items, answerSink(ctx));
  },
  { methods: ['POST', 'DELETE'], allowScopedTokens: true },
);

/** The job delete_items enqueues: delete_bulk(doctype, items), as the user who asked. */
export async function delete_bulk(kwargs: MethodArgs, ctx: MethodContext): Promise<void> {
  const meta = ctx.doc.meta.require(doctypeArg(kwargs.doctype));
  await deleteEach(ctx, meta.name, namesArg('items', kwargs.items), realtimeSink(ctx));
}

/**
 * export_query (form arguments as Frappe's desk sends them: doctype, file_format_type, fields,
 * filters, order_by, title, selected_items, page_length, csv_delimiter, csv_quoting): the
 * matching rows the caller may read, as a CSV download. See reportview_export.ts.
 */
export const export_query = whitelist(
  async (args, ctx) => {
    const meta = ctx.doc.meta.require(doctypeArg(args.doctype));
    const grants = grantsOf(meta, ctx.doc.principal);
    if (grants.report === false || grants.export === false) {
      throw new PermissionError(`You are not allowed to export ${meta.name} doctype`, { title: 'Not Permitted' });
    }
    ctx.response.download(await exportQuery(ctx, meta, args, grants.export === 'owner'));
  },
  { methods: ['GET', 'POST'], allowScopedTokens: true },
);
