import { randomUUID } from 'node:crypto';
import type { SecretBox } from '@quire/auth';
import { qualified, type Queryable } from '@quire/db';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

/**
 * Each tenant's OAuth signing keys (ES256), in its own schema: the public JWK in clear (the JWKS
 * every API process verifies against), the private JWK sealed with the platform's SecretBox.
 * Rotation adds a new active key and keeps the old ones published until their tokens expire.
 */
export const KEYS_TABLE = '__OAuthKeys';
export const SIGNING_ALG = 'ES256';

export function keysTableDDL(schema: string): string {
  return `CREATE TABLE IF NOT EXISTS ${qualified(schema, KEYS_TABLE)} (
    "kid" text PRIMARY KEY,
    "alg" text NOT NULL,
    "public_jwk" jsonb NOT NULL,
    "private_jwk" text NOT NULL,
    "created" timestamp(6) NOT NULL DEFAULT (clock_timestamp() at time zone 'utc'),
    "retired_at" timestamp(6)
  )`;
}

export interface PublicKey {
  kid: string;
  alg: string;
  jwk: JWK;
  retired: boolean;
}

/** Public keys, newest first (the first one not retired signs). */
export async function publicKeys(q: Queryable, schema: string): Promise<PublicKey[]> {
  const { rows } = await q.query<{ kid: string; alg: string; public_jwk: string | JWK; retired_at: string | null }>(
    `SELECT "kid", "alg", "public_jwk", "retired_at" FROM ${qualified(schema, KEYS_TABLE)} ORDER BY "created" DESC`,
  );
  return rows.map((r) => ({
    kid: r.kid,
    alg: r.alg,
    jwk: typeof r.public_jwk === 'string' ? (JSON.parse(r.public_jwk) as JWK) : r.public_jwk,
    retired: r.retired_at !== null,
  }));
}

/** Private JWKs for signing (active first), unsealed. Only the auth service needs these. */
export async function privateKeys(q: Queryable, schema: string, secrets: SecretBox): Promise<JWK[]> {
  const { rows } = await q.query<{ private_jwk: string; retired_at: string | null }>(
    `SELECT "private_jwk", "retired_at" FROM ${qualified(schema, KEYS_TABLE)} ORDER BY ("retired_at" IS NOT NULL), "created" DESC`,
  );
  return rows.map((r) => JSON.parse(secrets.decrypt(r.private_jwk)) as JWK);
}

/** A new active signing key; the previous ones stay published (retired keys still verify). */
export async function createSigningKey(q: Queryable, schema: string, secrets: SecretBox): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const kid = randomUUID();
  const pub = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
  const priv = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG, use: 'sig' };
  await q.query(`UPDATE ${qualified(schema, KEYS_TABLE)} SET "retired_at" = clock_timestamp() at time zone 'utc' WHERE "retired_at" IS NULL`);
  await q.query(`INSERT INTO ${qualified(schema, KEYS_TABLE)} ("kid", "alg", "public_jwk", "private_jwk") VALUES ($1, $2, $3::jsonb, $4)`, [
    kid,
    SIGNING_ALG,
    JSON.stringify(pub),
    secrets.encrypt(JSON.stringify(priv)),
  ]);
  return kid;
}

/** Retired keys older than this are dropped at rotation: every token they signed has expired. */
export async function dropExpiredKeys(q: Queryable, schema: string, olderThanSeconds: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM ${qualified(schema, KEYS_TABLE)} WHERE "retired_at" < (clock_timestamp() at time zone 'utc') - make_interval(secs => $1)`,
    [olderThanSeconds],
  );
  return rowCount;
}
