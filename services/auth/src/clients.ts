import { readSecretHash, verifyApiSecret } from '@quire/auth';
import { readClient, type TenantStore } from './adapter';

/**
 * The client a request authenticates as, for the endpoints we answer ourselves (revocation and
 * introspection of JWT access tokens): a public client by its id, a confidential one by its id and
 * secret (compared with the stored hash). Undefined when unknown or wrong.
 */
export async function authenticateClient(store: TenantStore, credentials: { id?: string; secret?: string }): Promise<string | undefined> {
  const { id, secret } = credentials;
  if (!id) return undefined;
  const row = await readClient(store, id);
  if (!row) return undefined;
  if (row.client_type === 'Public') return id;
  const hash = await readSecretHash(store.db(), store.schema, 'OAuth Client', id, 'client_secret');
  return hash && secret && verifyApiSecret(secret, hash) ? id : undefined;
}
