import { whitelist } from '@quire/apps';
import { generateKeys, hashPassword, storeSecretHash } from '@quire/auth';
import type { DocController } from '@quire/documents';
import { PermissionError, ValidationError } from '@quire/errors';
import { ADMINISTRATOR, GUEST } from '@quire/permissions';

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
      if (Number(doc.enabled) !== 1) throw new ValidationError(`User ${String(doc.name)} cannot be disabled`, { title: 'Not Allowed' });
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
      throw new ValidationError(`User ${String(doc.name)} cannot be deleted`, { title: 'Not Allowed' });
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
    const { tenant, changes } = ctx.doc;
    const keys = await ctx.doc.db.transaction((tx) => generateKeys(tx, tenant, user, ctx.doc.principal.user, changes));
    return { api_secret: keys.api_secret };
  },
  { methods: ['POST'] },
);
