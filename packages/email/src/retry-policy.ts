/**
 * When a failed email is tried again, and when a claim is presumed dead. Frappe gives an email
 * three attempts; the wait between them grows a minute per failure so a server that is down for a
 * moment is not asked again at once.
 */

/** Attempts an email gets; after the last failure its status is Error. */
export const MAX_ATTEMPTS = 3;

/** Before the next attempt, after `failures` failed ones: 1 min, then 2 min. */
export function retryDelayMs(failures: number): number {
  return failures * 60_000;
}

/**
 * A row in Sending this long after its claim belongs to a process that died mid-send: it is taken
 * again. Far longer than one send can last (every SMTP step times out within a minute).
 */
export const SENDING_LEASE_MS = 10 * 60_000;
