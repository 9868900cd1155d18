import { hash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Credentials at rest. API secrets are long random values we generate, so a fast hash (SHA-256)
 * is right for them and lets a verified key be checked on every request cheaply. Passwords are
 * chosen by people, so they get a memory-hard hash (scrypt) and are checked only at login.
 */

/** Frappe-shaped API key: 15 lower-case hex characters (an identifier, not a secret). */
export function generateApiKey(): string {
  return randomBytes(8).toString('hex').slice(0, 15);
}

/** 192 random bits as 48 hex characters. */
export function generateApiSecret(): string {
  return randomBytes(24).toString('hex');
}

export function hashApiSecret(secret: string): string {
  // crypto.hash: one call, no Hash object (measured: a third of a cached token check's cost was the object).
  return 'sha256$' + hash('sha256', secret, 'hex');
}

/** Constant-time comparison of a presented secret with its stored hash. */
export function verifyApiSecret(secret: string, stored: string): boolean {
  return matchesDigest(secret, storedDigest(stored));
}

const SHA256_PREFIX = 'sha256$';
/** Compared against when a stored hash is not one of ours: the same work, never a match. */
const UNMATCHABLE = Buffer.alloc(32);

/** The SHA-256 digest a stored `sha256$<hex>` holds, for matchesDigest; a hash of another form matches nothing. */
export function storedDigest(stored: string): Buffer {
  const hex = stored.startsWith(SHA256_PREFIX) ? stored.slice(SHA256_PREFIX.length) : '';
  return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : UNMATCHABLE;
}

/** Constant-time check of a presented secret against a stored digest (storedDigest), kept decoded by a cache. */
export function matchesDigest(secret: string, digest: Buffer): boolean {
  const actual = hash('sha256', secret, 'buffer') as unknown as Buffer;
  return timingSafeEqual(digest, actual) && digest !== UNMATCHABLE;
}

// ---- passwords: scrypt, N=2^15 r=8 p=1 (32 MiB, tens of milliseconds) ----

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 } as const;

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, keylen, { ...options, maxmem: 128 * (options.N ?? 1) * (options.r ?? 8) * 2 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, rounds, parallel, saltText, keyText, ...rest] = stored.split('$');
  if (scheme !== 'scrypt' || saltText === undefined || keyText === undefined || rest.length > 0) return false;
  const [N, r, p] = [Number(n), Number(rounds), Number(parallel)];
  const salt = Buffer.from(saltText, 'base64');
  const expected = Buffer.from(keyText, 'base64');
  const key = await scrypt(password, salt, expected.length, { N, r, p });
  return timingSafeEqual(key, expected);
}
