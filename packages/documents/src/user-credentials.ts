import { generateApiKey, generateApiSecret, hashApiSecret, storeSecretHash } from '@quire/auth';
import type { Queryable, Transaction } from '@quire/db';
import { DoesNotExistError } from '@quire/errors';
import { nowDatetime } from '@quire/meta';
import type { DocContext } from './context';
import { selectRow, setValues } from './storage';

/**
 * The fields of a User document the platform maintains itself, outside the document lifecycle
 * (Frappe writes them with `frappe.db.set_value` too): the API key pair and the last login.
 */

export interface ApiCredentials {
  api_key: string;
  api_secret: string;
}

/**
 * Frappe's generate_keys: keeps the user's api_key if it has one, issues a new secret, stores only
 * its hash. The plain secret exists only in the return value. Every process forgets the old secret
 * when `tx` commits. `preset` installs a pair issued elsewhere instead (the Tenant operator writes
 * its Secret before the tenant exists, so the plain secret is never only in memory).
 */
export async function generateKeys(
  tx: Transaction,
  ctx: Pick<DocContext, 'tenant' | 'meta' | 'changes'>,
  user: string,
  by: string,
  preset?: ApiCredentials,
): Promise<ApiCredentials> {
  const meta = ctx.meta.require('User');
  const row = await selectRow(tx, meta, user, true);
  if (!row) throw new DoesNotExistError(`User ${user} not found`, { title: 'Not Found' });
  const apiKey = preset?.api_key ?? (typeof row.api_key === 'string' && row.api_key !== '' ? row.api_key : generateApiKey());
  const apiSecret = preset?.api_secret ?? generateApiSecret();
  await setValues(tx, meta, user, { api_key: apiKey, api_secret: '*'.repeat(apiSecret.length), modified: nowDatetime(), modified_by: by });
  await storeSecretHash(tx, ctx.tenant.schema, 'User', user, 'api_secret', hashApiSecret(apiSecret));
  await ctx.changes.userChanged(tx, ctx.tenant, user);
  return { api_key: apiKey, api_secret: apiSecret };
}

/** Records a successful password login on the User (`last_login` holds the address, as in Frappe). */
export async function recordLogin(q: Queryable, ctx: Pick<DocContext, 'meta'>, user: string, ip: string): Promise<void> {
  await setValues(q, ctx.meta.require('User'), user, { last_login: ip.slice(0, 140), last_active: nowDatetime() });
}
