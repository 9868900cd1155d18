import { webhookCapture } from '@quire/webhooks';

/**
 * The frappe app's hooks (frappe/hooks.py). Every change to every DocType goes through the webhook
 * outbox, whichever process makes it: the API, the CLI or a worker.
 */
export const docEvents = {
  '*': webhookCapture,
};
