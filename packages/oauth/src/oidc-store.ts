import { ident, qualified, type Queryable } from '@quire/db';

/**
 * Storage for oidc-provider's models (sessions, interactions, grants, codes, refresh tokens, …) in
 * the tenant's schema, so an auth process restart loses nothing and any number of auth processes
 * serve a tenant. The shape follows oidc-provider's adapter contract.
 */
export const OIDC_TABLE = '__OIDC';

export function oidcTableDDL(schema: string): string[] {
  const t = qualified(schema, OIDC_TABLE);
  return [
    `CREATE TABLE IF NOT EXISTS ${t} (
      "model" text NOT NULL,
      "id" text NOT NULL,
      "payload" jsonb NOT NULL,
      "grant_id" text,
      "user_code" text,
      "uid" text,
      "expires_at" timestamp(6),
      "consumed_at" timestamp(6),
      PRIMARY KEY ("model", "id")
    )`,
    `CREATE INDEX IF NOT EXISTS "ix___OIDC_grant" ON ${t} ("grant_id")`,
    `CREATE INDEX IF NOT EXISTS "ix___OIDC_uid" ON ${t} ("uid")`,
    `CREATE INDEX IF NOT EXISTS "ix___OIDC_user_code" ON ${t} ("user_code")`,
    `CREATE INDEX IF NOT EXISTS "ix___OIDC_expires" ON ${t} ("expires_at")`,
  ];
}

export interface StoredModel {
  payload: Record<string, unknown>;
  consumed: boolean;
}

export async function upsertModel(
  q: Queryable,
  schema: string,
  model: string,
  id: string,
  payload: Record<string, unknown>,
  expiresInSeconds: number | undefined,
): Promise<void> {
  await q.query(
    `INSERT INTO ${qualified(schema, OIDC_TABLE)} ("model", "id", "payload", "grant_id", "user_code", "uid", "expires_at")
     VALUES ($1, $2, $3::jsonb, $4, $5, $6, CASE WHEN $7::float8 IS NULL THEN NULL ELSE (clock_timestamp() at time zone 'utc') + make_interval(secs => $7::float8) END)
     ON CONFLICT ("model", "id") DO UPDATE SET "payload" = EXCLUDED."payload", "grant_id" = EXCLUDED."grant_id",
       "user_code" = EXCLUDED."user_code", "uid" = EXCLUDED."uid", "expires_at" = EXCLUDED."expires_at"`,
    [
      model,
      id,
      JSON.stringify(payload),
      typeof payload.grantId === 'string' ? payload.grantId : null,
      typeof payload.userCode === 'string' ? payload.userCode : null,
      typeof payload.uid === 'string' ? payload.uid : null,
      expiresInSeconds ?? null,
    ],
  );
}

async function findBy(q: Queryable, schema: string, model: string, column: 'id' | 'uid' | 'user_code', value: string): Promise<StoredModel | undefined> {
  const { rows } = await q.query<{ payload: string | Record<string, unknown>; consumed_at: string | null }>(
    `SELECT "payload", "consumed_at" FROM ${qualified(schema, OIDC_TABLE)}
     WHERE "model" = $1 AND ${ident(column)} = $2 AND ("expires_at" IS NULL OR "expires_at" > (clock_timestamp() at time zone 'utc'))`,
    [model, value],
  );
  const row = rows[0];
  if (!row) return undefined;
  const payload = typeof row.payload === 'string' ? (JSON.parse(row.payload) as Record<string, unknown>) : row.payload;
  return { payload, consumed: row.consumed_at !== null };
}

export const findModel = (q: Queryable, schema: string, model: string, id: string) => findBy(q, schema, model, 'id', id);
export const findModelByUid = (q: Queryable, schema: string, model: string, uid: string) => findBy(q, schema, model, 'uid', uid);
export const findModelByUserCode = (q: Queryable, schema: string, model: string, code: string) => findBy(q, schema, model, 'user_code', code);

export async function consumeModel(q: Queryable, schema: string, model: string, id: string): Promise<void> {
  await q.query(`UPDATE ${qualified(schema, OIDC_TABLE)} SET "consumed_at" = clock_timestamp() at time zone 'utc' WHERE "model" = $1 AND "id" = $2`, [
    model,
    id,
  ]);
}

export async function destroyModel(q: Queryable, schema: string, model: string, id: string): Promise<void> {
  await q.query(`DELETE FROM ${qualified(schema, OIDC_TABLE)} WHERE "model" = $1 AND "id" = $2`, [model, id]);
}

/** Removes everything of a grant (its codes, refresh tokens, …); returns how many rows went. */
export async function revokeGrantModels(q: Queryable, schema: string, grantId: string): Promise<number> {
  const { rowCount } = await q.query(`DELETE FROM ${qualified(schema, OIDC_TABLE)} WHERE "grant_id" = $1`, [grantId]);
  return rowCount;
}

/** Grants not expired (the "active grants" metric). */
export async function activeGrantCount(q: Queryable, schema: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${qualified(schema, OIDC_TABLE)} WHERE "model" = 'Grant' AND ("expires_at" IS NULL OR "expires_at" > (clock_timestamp() at time zone 'utc'))`,
  );
  return rows[0]?.n ?? 0;
}

/** Deletes models that expired (finders already ignore them); returns how many went. */
export async function purgeExpiredModels(q: Queryable, schema: string): Promise<number> {
  const { rowCount } = await q.query(`DELETE FROM ${qualified(schema, OIDC_TABLE)} WHERE "expires_at" < (clock_timestamp() at time zone 'utc')`);
  return rowCount;
}
