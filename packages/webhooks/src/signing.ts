/**
 * Webhook signatures and the exact text that gets signed.
 *
 * - `frappeSignature`: Frappe's `X-Frappe-Webhook-Signature`, base64(HMAC-SHA256(secret, body)).
 * - `standardWebhookHeaders`: the Standard Webhooks (https://www.standardwebhooks.com) header triple.
 *
 * What gets signed is the exact body sent: `json.dumps(data)` as Frappe writes it (`pythonJsonDumps`
 * from @quire/frappe-compat).
 */
import { createHmac } from 'node:crypto';

/** base64(HMAC-SHA256(key = UTF-8 `secret`, message = UTF-8 `body`)): Frappe's X-Frappe-Webhook-Signature. */
export function frappeSignature(secret: string, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body, 'utf8').digest('base64');
}

export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Standard Webhooks headers: `webhook-signature` is `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)),
 * the key being the UTF-8 bytes of `secret` (a receiver uses `standardWebhookSecret(secret)` as its secret).
 */
export function standardWebhookHeaders(secret: string, id: string, timestampSeconds: number, body: string): StandardWebhookHeaders {
  if (!Number.isFinite(timestampSeconds)) throw new RangeError('timestampSeconds must be a finite number');
  const timestamp = String(Math.floor(timestampSeconds));
  const signature = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

/** The `whsec_…` form of `secret` that Standard Webhooks libraries (e.g. the `standardwebhooks` package) expect. */
export function standardWebhookSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}
