import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Reversible encryption for the secrets a document must be able to use again later (Password
 * fields such as a webhook's signing secret; Frappe's encrypted `__Auth` rows). AES-256-GCM with a
 * platform key. Login passwords and API secrets are never stored this way: they are hashed.
 */
export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
  /** A 32-byte key for one purpose (cookie signing, …), derived from the platform key. */
  derive(purpose: string): Buffer;
}

const VERSION = 'v1';

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the encryption key must be 32 bytes (base64 of 32 random bytes)');
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    decrypt(sealed) {
      const [version, payload] = sealed.split(':', 2);
      if (version !== VERSION || !payload) throw new Error('not a sealed secret');
      const raw = Buffer.from(payload, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
    derive(purpose) {
      return createHmac('sha256', key).update(`quire:${purpose}`).digest();
    },
  };
}

/** A key from its base64 text (QUIRE_ENCRYPTION_KEY), or a new random one. */
export function encryptionKey(base64?: string): Buffer {
  return base64 ? Buffer.from(base64, 'base64') : randomBytes(32);
}
