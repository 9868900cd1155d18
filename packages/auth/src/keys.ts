import { qualified, type ChangeNotifier, type Transaction } from '@quire/db';
import { DoesNotExistError } from '@quire/errors';
import { nowDatetime } from '@quire/meta';
import { storeSecretHash } from './auth-table';
import type { TenantRef } from './principals';
import { generateApiKey, generateApiSecret, hashApiSecret } from './secrets';

export interface ApiCredentials {
  api_key: string;
  api_secret: string;
}

/**
 * Frappe's generate_keys: keeps the user's api_key if it has one, issues a new secret, stores only
 * its hash. The plain secret exists only in the return value.
 */
export async function generateKeys(q: Transaction, tenant: TenantRef, user: string, by: string, changes: ChangeNotifier): Promise<ApiCredentials> {
  const users = qualified(tenant.schema, 'tabUser');
  const { rows } = await q.query<{ api_key: string | null }>(`SELECT "api_key" FROM ${users} WHERE "name" = $1 FOR UPDATE`, [user]);
  const row = rows[0];
  if (!row) throw new DoesNotExistError(`User ${user} not found`, { title: 'Not Found' });
  const apiKey = row.api_key || generateApiKey();
  const apiSecret = generateApiSecret();
  await q.query(
    `UPDATE ${users} SET "api_key" = $1, "api_secret" = $2, "modified" = $3::timestamp, "modified_by" = $4 WHERE "name" = $5`,
    [apiKey, '*'.repeat(apiSecret.length), nowDatetime(), by, user],
  );
  await storeSecretHash(q, tenant.schema, 'User', user, 'api_secret', hashApiSecret(apiSecret));
  // Every process (this one right after commit) forgets the old secret.
  await changes.userChanged(q, tenant, user);
  return { api_key: apiKey, api_secret: apiSecret };
}
