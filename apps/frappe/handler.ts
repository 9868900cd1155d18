import { whitelist } from '@quire/apps';

/** Frappe's bare command names (`/api/method/ping`) resolve to frappe.handler.<name>. */

export const ping = whitelist(() => 'pong', { allowGuest: true });

export const version = whitelist(() => QUIRE_VERSION, { allowGuest: true });

export const QUIRE_VERSION = '0.1.0';
