import { whitelist } from '@quire/apps';

/** `frappe.ping`, like frappe/__init__.py's. */
export const ping = whitelist(() => 'pong', { allowGuest: true, allowScopedTokens: true });
