import { hashPassword, storeSecretHash } from '@quire/auth';
import type { DocController } from '@quire/documents';
import { ValidationError } from '@quire/errors';
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

