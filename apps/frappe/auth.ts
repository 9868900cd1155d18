import { whitelist } from '@quire/apps';
import { z } from 'zod';

/** frappe.auth.get_logged_user: the caller's user id (Guest is refused: not a guest method). */
export const get_logged_user = whitelist((_args, ctx) => ctx.doc.principal.user, {
  allowScopedTokens: true,
  returns: z.string(),
  summary: 'The signed-in user',
});
