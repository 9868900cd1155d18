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
