import { whitelist } from '@quire/apps';
import { z } from 'zod';
import { generateApiSecret, hashApiSecret, storeSecretHash } from '@quire/auth';
import { setValues, type DocController, type DocData } from '@quire/documents';
import { PermissionError, ValidationError } from '@quire/errors';
import { cstr } from '@quire/frappe-compat';

/**
 * OAuth Client (frappe/integrations/doctype/oauth_client): `client_id` is the document name; a
 * confidential client's secret is generated here, stored only as a hash in __Auth, and appears in
 * clear exactly once — in the answer to the request that created it (or to reset_client_secret).
 */

const SECRET_FIELD = 'client_secret';

function fail(message: string): never {
  throw new ValidationError(message, { title: 'Invalid OAuth Client' });
}

export function redirectUris(doc: DocData): string[] {
  return cstr(doc.redirect_uris)
    .split(/\s+/)
    .map((u) => u.trim())
    .filter(Boolean);
}

function validUri(uri: string): boolean {
  try {
    const u = new URL(uri);
    // https anywhere; http only for loopback (RFC 8252 native apps, local development); private-use schemes for apps
    if (u.hash) return false;
    if (u.protocol === 'https:') return true;
    if (u.protocol === 'http:') return ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname) || u.hostname.endsWith('.localhost');
    return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(u.protocol);
  } catch {
    return false;
  }
}

export const controller: DocController = {
  before_validate({ doc, previous }) {
    doc.client_id = doc.name;
    // The secret is never written through a document save; only this controller sets it.
    doc.client_secret = previous?.client_secret ?? null;
  },

  validate({ doc }) {
    const grant = cstr(doc.grant_type);
    const uris = redirectUris(doc);
    if (grant === 'Authorization Code') {
      if (uris.length === 0) fail('Authorization Code clients need at least one redirect URI');
      for (const uri of uris) if (!validUri(uri)) fail(`Invalid redirect URI ${uri}: use https (http only for localhost), without a fragment`);
      if (!doc.default_redirect_uri) doc.default_redirect_uri = uris[0];
      if (!uris.includes(String(doc.default_redirect_uri))) fail('The default redirect URI must be one of the redirect URIs');
      doc.response_type = 'Code';
    } else if (grant === 'Client Credentials') {
      if (!doc.user) fail('A Client Credentials client acts as a user: set User');
      if (doc.client_type === 'Public') fail('A Client Credentials client must be Confidential');
      doc.response_type = '';
    } else {
      fail('Grant Type must be Authorization Code or Client Credentials (the implicit and password grants are not offered: OAuth 2.0 Security BCP)');
    }
    const scopes = cstr(doc.scopes).split(/\s+/).filter(Boolean);
    if (scopes.length === 0) fail('Scopes are required');
    for (const s of scopes) if (!/^[a-z0-9_]+(:(read|write))?$/.test(s)) fail(`Invalid scope ${s}`);
    doc.scopes = scopes.join(' ');
  },

  async after_insert({ doc, ctx, tx }) {
    if (doc.client_type === 'Public') return;
    const secret = generateApiSecret();
    await storeSecretHash(tx, ctx.tenant.schema, 'OAuth Client', String(doc.name), SECRET_FIELD, hashApiSecret(secret));
    await setValues(tx, ctx.meta.require('OAuth Client'), String(doc.name), { client_secret: '*'.repeat(12) });
    // The answer to this request is the one place the plain secret appears.
    doc.client_secret = secret;
  },
};

/** reset_client_secret(client): a System Manager issues a new secret; the old one stops working. */
export const reset_client_secret = whitelist(
  async (args, ctx) => {
    if (!ctx.doc.principal.roles.has('System Manager')) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
    const name = typeof args.client === 'string' ? args.client : '';
    const meta = ctx.doc.meta.require('OAuth Client');
    const { rows } = await ctx.doc.db.query<{ client_type: string }>(`SELECT "client_type" FROM ${meta.table} WHERE "name" = $1`, [name]);
    if (!rows[0]) throw new ValidationError(`OAuth Client ${name} not found`, { title: 'Not Found' });
    if (rows[0].client_type === 'Public') fail('A public client has no secret');
    const secret = generateApiSecret();
    await ctx.doc.db.transaction(async (tx) => {
      await storeSecretHash(tx, ctx.doc.tenant.schema, 'OAuth Client', name, SECRET_FIELD, hashApiSecret(secret));
      await setValues(tx, meta, name, { client_secret: '*'.repeat(12) });
    });
    return { client_id: name, client_secret: secret };
  },
  {
    methods: ['POST'],
    args: z.object({ client: z.string() }),
    returns: z.object({ client_id: z.string(), client_secret: z.string() }),
    summary: 'Issues a new secret for an OAuth client; the old one stops working',
  },
);
