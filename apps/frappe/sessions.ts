import { whitelist } from '@quire/apps';
import { hashSessionId, sessionCsrfToken } from '@quire/auth';
import { ValidationError } from '@quire/errors';

/**
 * frappe.sessions.get_csrf_token: issues (once) the CSRF token of the caller's cookie session.
 * From then on every unsafe request of that session must carry it in `X-Frappe-CSRF-Token`, as
 * Frappe's desk does with `window.csrf_token`. Token-authenticated callers have no session.
 */
export const get_csrf_token = whitelist(async (_args, ctx) => {
  const sid = ctx.request.sessionId;
  if (!sid || ctx.request.headers.authorization) throw new ValidationError('A CSRF token belongs to a login session', { title: 'No Session' });
  const sidHash = hashSessionId(sid);
  const { tenant, changes } = ctx.doc;
  return ctx.doc.db.transaction(async (tx) => {
    const token = await sessionCsrfToken(tx, tenant, sidHash);
    await changes.sessionChanged(tx, tenant, sidHash);
    return token;
  });
});
