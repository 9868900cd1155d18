import { whitelist, type MethodArgs, type MethodContext } from '@quire/apps';
import { getDoc, updateDoc, type DocData } from '@quire/documents';
import { FrappeError, ValidationError } from '@quire/errors';
import { decodeJsonArg, isPlainObject } from '@quire/frappe-compat';
import { RESERVED_FIELDNAMES, type Right } from '@quire/meta';
import { checkPermission } from '@quire/permissions';
import { answerSink, doctypeArg, namesArg, publishProgress, realtimeSink, type MessageSink } from '../../bulk_messages';

/**
 * frappe.desk.doctype.bulk_update.bulk_update.submit_cancel_or_update_docs(doctype, docnames,
 * action="submit", data=None, task_id=None): the list's bulk Submit, Cancel and Edit, as Frappe v15
 * does them. Each document goes through the normal save path (@quire/documents updateDoc: the
 * caller's rights on it, permlevels, validation, hooks) in its own transaction, so one refusal
 * leaves the others saved:
 *
 * - `submit` submits a draft (setting `data` first when given), `cancel` cancels a submitted one,
 *   `update` sets `data`'s fields on any that is not cancelled (a submitted one only in its
 *   "allow on submit" fields). A field at a permlevel the caller may not write keeps its value, as
 *   Frappe's save resets it. A document the action does not apply to counts as failed.
 * - The answer is Frappe's: the list of names that failed (`[]` when none). Why each failed is in
 *   `_server_messages` (the refusal's own message), where Frappe's message log carries it too.
 * - Fewer than 20 names run at once; 20 to 500 are a background job on the short queue (the call
 *   answers nothing, with "Bulk operation is enqueued in background."; the job tells the user's
 *   sockets `progress` as it goes and a `msgprint` for each failure); more than 500 are refused.
 *
 * A caller without the action's right on the DocType at all (write, submit or cancel) gets a 403
 * before anything is saved or enqueued. `data` may not set standard columns (name, docstatus, …).
 */

const INLINE_MAX = 20;
const BULK_MAX = 500;
const JOB_TIMEOUT = 1_000;

type Action = 'submit' | 'cancel' | 'update';
type Name = string | number;

const RIGHT_OF: Record<Action, Right> = { submit: 'submit', cancel: 'cancel', update: 'write' };

function actionArg(value: unknown): Action {
  const action = value === undefined || value === null || value === '' ? 'submit' : value;
  if (action !== 'submit' && action !== 'cancel' && action !== 'update') {
    throw new ValidationError('action must be submit, cancel or update', { title: 'Invalid Request' });
  }
  return action;
}

/** `data` (an object or its JSON text) for update and submit; required for update. */
function dataArg(value: unknown, action: Action): DocData | undefined {
  if (value === undefined || value === null || value === '') {
    if (action === 'update') throw new ValidationError('data is required to update documents', { title: 'Missing Argument' });
    return undefined;
  }
  const data = decodeJsonArg('data', value);
  if (!isPlainObject(data)) throw new ValidationError('data must be a JSON object of field values', { title: 'Invalid Request' });
  const standard = Object.keys(data).filter((key) => RESERVED_FIELDNAMES.has(key));
  if (standard.length > 0) throw new ValidationError(`Cannot edit standard fields: ${standard.join(', ')}`, { title: 'Not Allowed' });
  return { ...data };
}

interface BulkRequest {
  doctype: string;
  docnames: Name[];
  action: Action;
  data: DocData | undefined;
  taskId: string | undefined;
}

const TITLES: Record<Action, string> = { submit: 'Submitting', cancel: 'Cancelling', update: 'Updating' };

/** The patch that carries out `action` on a document whose docstatus is `docstatus`, or undefined when it does not apply. */
function patchFor(action: Action, docstatus: number, data: DocData | undefined): DocData | undefined {
  if (action === 'submit' && docstatus === 0) return { ...data, docstatus: 1 };
  if (action === 'cancel' && docstatus === 1) return { docstatus: 2 };
  if (action === 'update' && docstatus < 2) return { ...data };
  return undefined;
}

/** Each document in its own transaction; answers the names that failed. */
async function bulkAction(ctx: MethodContext, request: BulkRequest, tell: MessageSink): Promise<Name[]> {
  const { doctype, docnames, action, data, taskId } = request;
  const failed: Name[] = [];
  for (const [i, name] of docnames.entries()) {
    try {
      const current = await getDoc(ctx.doc, doctype, name);
      const docstatus = Number(current.docstatus ?? 0);
      const patch = patchFor(action, docstatus, data);
      if (patch === undefined) {
        failed.push(name);
        tell(`${doctype} ${String(name)}: cannot ${action} a document with docstatus ${docstatus}`, 'Not Allowed');
      } else {
        await updateDoc(ctx.doc, doctype, name, patch);
      }
    } catch (e) {
      if (!(e instanceof FrappeError)) throw e;
      failed.push(name);
      tell(e.message, e.title ?? 'Message');
    }
    publishProgress(ctx, {
      percent: ((i + 1) / docnames.length) * 100,
      title: `${TITLES[action]} ${doctype}`,
      description: String(name),
      ...(taskId ? { task_id: taskId } : {}),
    });
  }
  return failed;
}

export const submit_cancel_or_update_docs = whitelist(
  async (args, ctx) => {
    const meta = ctx.doc.meta.require(doctypeArg(args.doctype));
    const action = actionArg(args.action);
    const request: BulkRequest = {
      doctype: meta.name,
      docnames: namesArg('docnames', args.docnames),
      action,
      data: dataArg(args.data, action),
      taskId: typeof args.task_id === 'string' && args.task_id !== '' ? args.task_id : undefined,
    };
    checkPermission(meta, ctx.doc.principal, RIGHT_OF[action]);
    if (request.docnames.length < INLINE_MAX) return bulkAction(ctx, request, answerSink(ctx));
    if (request.docnames.length > BULK_MAX) {
      throw new ValidationError(`Bulk operations only support up to ${BULK_MAX} documents.`, { title: 'Too Many Documents' });
    }
    ctx.response.msgprint('Bulk operation is enqueued in background.');
    await ctx.enqueue('frappe.desk.doctype.bulk_update.bulk_update.bulk_action', {
      queue: 'short',
      timeout: JOB_TIMEOUT,
      kwargs: { doctype: request.doctype, docnames: request.docnames, action, data: request.data ?? null, task_id: request.taskId ?? null },
    });
    return undefined;
  },
  { methods: ['POST', 'PUT'], allowScopedTokens: true },
);

/** The job submit_cancel_or_update_docs enqueues for 20 to 500 documents (Frappe's _bulk_action). */
export async function bulk_action(kwargs: MethodArgs, ctx: MethodContext): Promise<void> {
  const meta = ctx.doc.meta.require(doctypeArg(kwargs.doctype));
  const action = actionArg(kwargs.action);
  await bulkAction(
    ctx,
    {
      doctype: meta.name,
      docnames: namesArg('docnames', kwargs.docnames),
      action,
      data: dataArg(kwargs.data, action),
      taskId: typeof kwargs.task_id === 'string' ? kwargs.task_id : undefined,
    },
    realtimeSink(ctx),
  );
}
