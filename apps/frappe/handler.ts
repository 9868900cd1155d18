import { whitelist, type MethodContext } from '@quire/apps';
import { z } from 'zod';
import { authenticatePassword, createSession, endSession, SESSION_COOKIES } from '@quire/auth';
import { recordLogin } from '@quire/documents';

/**
 * frappe.handler: the bare command names (`/api/method/ping`, `/api/method/login`, `cmd=logout`).
 */

export const QUIRE_VERSION = '0.1.0';

export const ping = whitelist(() => 'pong', { allowGuest: true, allowScopedTokens: true, returns: z.literal('pong'), summary: 'Answers pong: the API is up' });

export const version = whitelist(() => QUIRE_VERSION, { allowGuest: true, allowScopedTokens: true });

/**
 * login(usr, pwd): checks the password (memory-hard hash, throttled per user and address), opens a
 * durable session and sets Frappe's cookies; answers `{"message": "Logged In", "home_page",
 * "full_name"}` (`No App` for a Website User), or 401 `Invalid login credentials`.
 */
export const login = whitelist(
  async (args, ctx) => {
    const { db, tenant } = ctx.doc;
    const user = await authenticatePassword(db, tenant, { usr: args.usr, pwd: args.pwd, ip: ctx.request.ip });
    await recordLogin(db, ctx.doc, user.user, ctx.request.ip);
    const expiry = ctx.settings.sessionExpirySeconds;
    const device = typeof args.device === 'string' && args.device ? args.device : 'desktop';
    const session = await createSession(db, tenant, user.user, { ip: ctx.request.ip, device, expirySeconds: expiry });
    const systemUser = user.userType === 'System User';
    ctx.response.setCookie('sid', session.sid, { httpOnly: true, maxAge: expiry });
    ctx.response.setCookie('system_user', systemUser ? 'yes' : 'no');
    ctx.response.setCookie('full_name', user.fullName);
    ctx.response.setCookie('user_id', user.user);
    ctx.response.setCookie('user_image', user.userImage);
    ctx.response.set('home_page', systemUser ? '/app' : '/me');
    ctx.response.set('full_name', user.fullName);
    return systemUser ? 'Logged In' : 'No App';
  },
  { allowGuest: true },
);

/** logout: ends this session everywhere and expires the session cookies. */
export const logout = whitelist(
  async (_args, ctx: MethodContext) => {
    const sid = ctx.request.sessionId;
    if (sid && sid !== 'Guest') await endSession(ctx.doc.db, ctx.doc.tenant, ctx.doc.changes, sid);
    for (const name of SESSION_COOKIES) ctx.response.clearCookie(name);
    ctx.response.set('home_page', '/');
    ctx.response.set('full_name', 'Guest');
    return 'No App';
  },
  { allowGuest: true },
);

// ------------------------------------------------------------------------------------ upload_file
// (imports are hoisted; kept beside the one export that needs them)
import { uploadFile } from './core/doctype/file/file';

/**
 * upload_file (multipart `file`, or `file_url` / `library_file_name`; `is_private`, `folder`,
 * `doctype` + `docname` [+ `fieldname`], `file_name`): saves a File and answers
 * `{"message": {…File…}}` with `file_url` `/files/<name>` or `/private/files/<name>`. POST only;
 * Guest may call it but is refused (Frappe allows guest uploads only by a System Setting, off by default).
 */
export const upload_file = whitelist((args, ctx) => uploadFile(args, ctx), { methods: ['POST'], allowGuest: true, allowScopedTokens: true });
