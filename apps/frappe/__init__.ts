import { whitelist } from '@quire/apps';
import { z } from 'zod';

/** `frappe.ping`, like frappe/__init__.py's. */
export const ping = whitelist(() => 'pong', { allowGuest: true, allowScopedTokens: true, returns: z.literal('pong'), summary: 'Answers pong: the API is up' });
