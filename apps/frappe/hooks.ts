import { webhookCapture } from '@quire/webhooks';
import { documentHistory } from './desk/form/document_history';
import { globalSearchDoctypeIndex, globalSearchIndex } from './utils/global_search_index';

/**
 * The frappe app's hooks (frappe/hooks.py). Every change to every DocType goes through the webhook
 * outbox, whichever process makes it: the API, the CLI or a worker, and keeps the global search index;
 * a deleted document's history (ToDos, Comments, Versions) goes with it.
 */
export const docEvents = {
  '*': [webhookCapture, globalSearchIndex, documentHistory],
  DocType: globalSearchDoctypeIndex,
};

/** The frappe app's scheduler_events: the Email Queue is flushed every tick (every minute). */
export const schedulerEvents = {
  all: ['frappe.email.queue.flush'],
};

/**
 * Whose a document is, beyond its `owner`, for `if_owner` permission rows: a ToDo is also its
 * assignee's and its assigner's (frappe/desk/doctype/todo/todo.py: has_permission and
 * permission_query_conditions), so an assigned user sees, counts and closes the ToDo made for them.
 * Declared here rather than coded: the document checks and every list's row conditions read it
 * (Meta.ownerFields); each field must be a Link to User of the DocType (checked at load).
 * ToDo.allocated_to has search_index: "my ToDos" (allocated_to = me) is the desk's hot lookup.
 */
export const ownerFields = {
  ToDo: ['allocated_to', 'assigned_by'],
};
