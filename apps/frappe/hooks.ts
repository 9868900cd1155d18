import { webhookCapture } from '@quire/webhooks';

/**
 * The frappe app's hooks (frappe/hooks.py). Every change to every DocType goes through the webhook
 * outbox, whichever process makes it: the API, the CLI or a worker.
 */
export const docEvents = {
  '*': webhookCapture,
};

/** The frappe app's scheduler_events: the Email Queue is flushed every tick (every minute). */
export const schedulerEvents = {
  all: ['frappe.email.queue.flush'],
};
