import { TooManyRequestsError } from '@quire/errors';
import type { Response } from 'express';
import { errorEnvelope, errorEnvelopeV2 } from './envelope';
import { sendJsonText } from './respond';

/**
 * How long a refusal (429) is held before it is sent. A client that ignores Retry-After and asks
 * again at once, on many connections, would otherwise have the process do nothing but refuse it
 * (measured: 14,000 refusals a second took the event loop from the other tenants); held this long,
 * each of its connections is refused at most 40 times a second, and the answer still comes within 50 ms.
 */
export const REFUSAL_HOLD_MS = 25;

/** Bodies of recent refusals by API version and message (a rate-limit message changes each second). */
const bodies = new Map<string, string>();
const MAX_BODIES = 256;

/**
 * Answers a refusal after REFUSAL_HOLD_MS (its connection idle meanwhile: a timer, no work), as
 * cheaply as an answer can be: the error's envelope is made once per message and written as it is,
 * without the error pipeline (no stack captured, no router pass, no log line: refusals are counted in
 * quire_tenant_throttled_total). A flood's refusals are what they cost the other tenants.
 */
export function refuseSoon(res: Response, message: string, headers: Readonly<Record<string, string>>): void {
  setTimeout(() => sendRefusal(res, message, headers), REFUSAL_HOLD_MS).unref();
}

/** A 429 TooManyRequestsError saying `message`, with `headers` (Retry-After, X-RateLimit-*). */
function sendRefusal(res: Response, message: string, headers: Readonly<Record<string, string>>): void {
  if (res.headersSent || res.destroyed) return;
  const v2 = res.locals.apiVersion === 'v2';
  const key = `${v2 ? 2 : 1}\0${message}`;
  let body = bodies.get(key);
  if (body === undefined) {
    const refusal = new TooManyRequestsError(message, { title: 'Too Many Requests' });
    body = JSON.stringify((v2 ? errorEnvelopeV2 : errorEnvelope)(refusal, false).body);
    if (bodies.size >= MAX_BODIES) bodies.clear();
    bodies.set(key, body);
  }
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJsonText(res, TooManyRequestsError.httpStatus, body);
}
