import { createSecretBox, encryptionKey, type SecretBox } from '@quire/auth';
import type { Queryable } from '@quire/db';

/**
 * The platform's SecretBox: from QUIRE_ENCRYPTION_KEY when set (recommended: keep the key out of
 * the database), else from a key generated once and kept in `quire.settings`, so every process of
 * the platform shares it.
 */
export async function loadSecretBox(db: Queryable, configuredKey: string | undefined): Promise<SecretBox> {
  if (configuredKey) return createSecretBox(encryptionKey(configuredKey));
  const fresh = encryptionKey().toString('base64');
  await db.query(`INSERT INTO quire.settings ("key", "value") VALUES ('encryption_key', $1) ON CONFLICT ("key") DO NOTHING`, [fresh]);
  const { rows } = await db.query<{ value: string }>(`SELECT "value" FROM quire.settings WHERE "key" = 'encryption_key'`);
  const stored = rows[0]?.value;
  if (stored === undefined) throw new Error('quire.settings has no encryption_key after inserting one');
  return createSecretBox(encryptionKey(stored));
}
