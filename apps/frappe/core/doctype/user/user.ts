import { whitelist } from '@quire/apps';
import { z } from 'zod';
import { createHash, randomBytes } from 'node:crypto';
import { AUTH_TABLE, hashPassword, readSecretHash, SESSIONS_TABLE, storeSecretHash, verifyPassword } from '@quire/auth';
import { qualified } from '@quire/db';
import { generateKeys, insertDoc, setValues } from '@quire/documents';
import { nowDatetime } from '@quire/meta';
import type { DocController } from '@quire/documents';
import { AuthenticationError, PermissionError, ValidationError } from '@quire/errors';
import { ADMINISTRATOR, GUEST, makePrincipal } from '@quire/permissions';

/**
 * User: the email is the name (lower-cased), the full name is derived, login passwords and API
 * secrets are hashed into __Auth and never stored on the document. Changes to a user (roles,
 * enabled) reach every process's credential cache.
 */

const isMasked = (v: unknown) => typeof v !== 'string' || v === '' || /^\*+$/.test(v);

export const controller: DocController = {
  before_insert({ doc }) {
    if (typeof doc.email === 'string') doc.email = doc.email.trim().toLowerCase();
  },

  before_validate({ doc, previous }) {
    doc.full_name = [doc.first_name, doc.middle_name, doc.last_name].filter((p) => typeof p === 'string' && p.trim() !== '').join(' ');
    // Keys are issued only by generate_keys; a document write never sets them.
    doc.api_key = previous?.api_key ?? null;
    doc.api_secret = previous?.api_secret ?? null;
    if (doc.name === ADMINISTRATOR || doc.name === GUEST) {
      if (Number(doc.enabled) !== 1) throw new ValidationError(`User ${doc.name} cannot be disabled`, { title: 'Not Allowed' });
      if (doc.name === ADMINISTRATOR) doc.user_type = 'System User';
    }
  },

  async before_save({ doc, ctx, tx }) {
    const password = doc.new_password;
    doc.new_password = null;
    if (isMasked(password)) return;
    await storeSecretHash(tx, ctx.tenant.schema, 'User', String(doc.name), 'password', await hashPassword(String(password)));
  },

  async on_update({ doc, ctx, tx }) {
    await ctx.changes.userChanged(tx, ctx.tenant, String(doc.name));
  },

  async on_trash({ doc, ctx, tx }) {
    if (doc.name === ADMINISTRATOR || doc.name === GUEST) {
      throw new ValidationError(`User ${doc.name} cannot be deleted`, { title: 'Not Allowed' });
    }
    await ctx.changes.userChanged(tx, ctx.tenant, String(doc.name));
  },
};

/**
 * generate_keys(user): a System Manager issues a new API secret for a user (the key is kept if the
 * user has one). Answers `{"api_secret": …}`; the secret is stored only as a hash.
 */
export const generate_keys = whitelist(
  async (args, ctx) => {
    if (!ctx.doc.principal.roles.has('System Manager')) throw new PermissionError('', { silent: true });
    const user = typeof args.user === 'string' ? args.user : '';
    if (!user) throw new ValidationError('user is required', { title: 'Missing Argument' });
    const keys = await ctx.doc.db.transaction((tx) => generateKeys(tx, ctx.doc, user, ctx.doc.principal.user));
    return { api_secret: keys.api_secret };
  },
  {
    methods: ['POST'],
    args: z.object({ user: z.string().min(1) }),
    returns: z.object({ api_secret: z.string() }),
    summary: 'Issues a new API secret for a user (shown once; the key is kept when the user has one)',
  },
);

const RESET_KEY_FIELD = 'reset_password_key';
const RESET_KEY_HOURS = 24;
const ADMIN = makePrincipal(ADMINISTRATOR, ['Administrator', 'System Manager']);

function resetKeyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * reset_password(user) (Guest, POST): queues an email with a one-time link (valid 24 h; only its
 * hash is stored) to the tenant's own URL, whatever Host the request came with. At most 3 an hour
 * per user and 10 per client address (429 beyond). Answers as Frappe: 404 `not found` for an unknown user, `not allowed` for the
 * Administrator, `disabled` for a disabled user, otherwise a message in `_server_messages`.
 * Delivery is the Email Queue's: the record is written here, a mail sender sends it.
 */
export const reset_password = whitelist(
  async (args, ctx) => {
    const wanted = typeof args.user === 'string' ? args.user.trim() : '';
    const { rows } = await ctx.doc.db.query<{ name: string; enabled: number; full_name: string | null; email: string }>(
      `SELECT "name", "enabled", "full_name", "email" FROM ${ctx.doc.meta.require('User').table} WHERE lower("name") = lower($1) OR lower("email") = lower($1) LIMIT 1`,
      [wanted],
    );
    const user = rows[0];
    if (!user || user.name === GUEST) {
      ctx.response.status(404);
      return 'not found';
    }
    if (user.name === ADMINISTRATOR) return 'not allowed';
    if (!user.enabled) return 'disabled';
    const key = randomBytes(32).toString('hex');
    const admin = { ...ctx.doc, principal: ADMIN };
    await ctx.doc.db.transaction(async (tx) => {
      const inTx = { ...admin, db: tx };
      await storeSecretHash(tx, ctx.doc.tenant.schema, 'User', user.name, RESET_KEY_FIELD, resetKeyHash(key));
      await setValues(tx, ctx.doc.meta.require('User'), user.name, { last_reset_password_key_generated_on: nowDatetime() });
      await insertDoc(
        inTx,
        'Email Queue',
        {
          recipients: user.email,
          subject: 'Password Reset',
          message: `Hello ${user.full_name ?? user.name},\n\nTo reset your password, open ${ctx.siteUrl}/update-password?key=${key}\n\nThe link is valid for ${RESET_KEY_HOURS} hours and works once.`,
          reference_doctype: 'User',
          reference_name: user.name,
        },
        { ignorePermissions: true },
      );
    });
    ctx.response.msgprint(`Password reset instructions have been sent to ${user.full_name ?? user.name}'s email`, 'Password Email Sent');
    return undefined;
  },
  {
    allowGuest: true,
    methods: ['POST'],
    // Frappe's password_reset_limit (3 an hour per user), and per client address, checked first so
    // one address cannot run up the counts of users it names.
    rateLimit: [
      { limit: 10, seconds: 3600 },
      { limit: 3, seconds: 3600, key: 'user', ipBased: false },
    ],
  },
);

/**
 * update_password(new_password, key=None, old_password=None) (Guest, POST): sets a new password
 * with a reset key (once, within 24 h) or, for a logged-in user, with the old password. Every
 * session of the user ends. Answers the home page, or 410 when the key is used or invalid.
 */
export const update_password = whitelist(
  async (args, ctx) => {
    const password = typeof args.new_password === 'string' ? args.new_password : '';
    if (password.length < 1 || password.length > 512) throw new ValidationError('A new password is required', { title: 'Missing Password' });
    const { db, tenant } = ctx.doc;
    const users = ctx.doc.meta.require('User').table;
    let user: string | undefined;
    if (typeof args.key === 'string' && args.key) {
      const { rows } = await db.query<{ name: string }>(
        `SELECT a."name" FROM ${qualified(tenant.schema, AUTH_TABLE)} a JOIN ${users} u ON u."name" = a."name"
         WHERE a."doctype" = 'User' AND a."fieldname" = $1 AND a."password" = $2 AND u."enabled" = 1
           AND u."last_reset_password_key_generated_on" > (now() at time zone 'utc') - make_interval(hours => $3)`,
        [RESET_KEY_FIELD, resetKeyHash(args.key), RESET_KEY_HOURS],
      );
      user = rows[0]?.name;
      if (!user) {
        ctx.response.status(410);
        return 'The reset password link has either been used before or is invalid';
      }
    } else {
      const me = ctx.doc.principal.user;
      if (me === GUEST) throw new ValidationError('A reset key or the old password is required', { title: 'Not Allowed' });
      const stored = await readSecretHash(db, tenant.schema, 'User', me, 'password');
      if (!stored || typeof args.old_password !== 'string' || !(await verifyPassword(args.old_password, stored))) {
        throw new AuthenticationError('Incorrect old password', { extra: { message: 'Incorrect old password' } });
      }
      user = me;
    }
    const who = user;
    await db.transaction(async (tx) => {
      await storeSecretHash(tx, tenant.schema, 'User', who, 'password', await hashPassword(password));
      await tx.query(`DELETE FROM ${qualified(tenant.schema, AUTH_TABLE)} WHERE "doctype" = 'User' AND "name" = $1 AND "fieldname" = $2`, [
        who,
        RESET_KEY_FIELD,
      ]);
      await tx.query(`DELETE FROM ${qualified(tenant.schema, SESSIONS_TABLE)} WHERE "user" = $1`, [who]);
      await ctx.doc.changes.userChanged(tx, tenant, who);
    });
    return '/app';
  },
  // Guessing an old password (a stolen session) or a key costs a password hash per try.
  { allowGuest: true, methods: ['POST'], rateLimit: [{ limit: 10, seconds: 600 }] },
);
