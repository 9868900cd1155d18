import type { DocController } from '@quire/documents';
import { ValidationError } from '@quire/errors';
import { cstr } from '@quire/frappe-compat';

/**
 * Email Account (frappe/email/doctype/email_account/email_account.py), its outgoing side: named
 * after the address when no name is given, a login id only when it differs, a server when sending
 * is on, and one default outgoing account per tenant. Unlike Frappe, saving does not dial the SMTP
 * server: a bad setting shows in the Email Queue's `error` of the first email sent through it.
 */

function fail(message: string): never {
  throw new ValidationError(message, { title: 'Invalid Email Account' });
}

/** Frappe's autoname: `jerry.yang@example.com` -> `Jerry Yang`. */
function nameFromAddress(email: string): string {
  return (email.split('@', 1)[0] ?? '').replace(/[._-]/g, ' ').replace(/\w\S*/g, (word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase());
}

export const controller: DocController = {
  before_insert({ doc }) {
    if (!cstr(doc.email_account_name).trim()) doc.email_account_name = nameFromAddress(cstr(doc.email_id)) || null;
  },

  validate({ doc }) {
    if (doc.login_id_is_different) {
      if (!cstr(doc.login_id).trim()) fail('Login Id is required');
    } else {
      doc.login_id = null;
    }
    if (doc.enable_outgoing && !cstr(doc.smtp_server).trim()) fail('SMTP Server is required');
    // Implicit TLS has nothing left to upgrade: STARTTLS on top of it cannot work.
    if (doc.use_tls && doc.use_ssl_for_outgoing) fail('Use either TLS (STARTTLS) or SSL for outgoing, not both');
    const port = Number(doc.smtp_port ?? 0);
    if (!Number.isInteger(port) || port < 0 || port > 65535) fail('Port must be between 1 and 65535');
  },

  // Frappe's there_must_be_only_one_default: this account becomes the default, the others stop being one.
  async on_update({ doc, meta, tx }) {
    if (!doc.default_outgoing) return;
    await tx.query(`UPDATE ${meta.table} SET "default_outgoing" = 0 WHERE "default_outgoing" = 1 AND "name" <> $1`, [String(doc.name)]);
  },
};
