import { qualified, type Queryable } from '@quire/db';

/**
 * Revocation records: JWT access tokens are not stored by oidc-provider, so revoking one (or a
 * whole grant) writes a row here, kept until the token would have expired anyway. API processes
 * hold the set in memory, refreshed by NOTIFY and by a short poll.
 */
export const REVOCATIONS_TABLE = '__OAuthRevocations';

export function revocationsTableDDL(schema: string): string {
  return `CREATE TABLE IF NOT EXISTS ${qualified(schema, REVOCATIONS_TABLE)} (
    "kind" text NOT NULL CHECK ("kind" IN ('token', 'grant')),
    "id" text NOT NULL,
    "expires_at" timestamp(6) NOT NULL,
    "created" timestamp(6) NOT NULL DEFAULT (clock_timestamp() at time zone 'utc'),
    PRIMARY KEY ("kind", "id")
  )`;
}

/** Records a revoked token (by `jti`) or grant (by grant id), until `expiresInSeconds` from now. */
export async function recordRevocation(q: Queryable, schema: string, kind: 'token' | 'grant', id: string, expiresInSeconds: number): Promise<void> {
  await q.query(
    `INSERT INTO ${qualified(schema, REVOCATIONS_TABLE)} ("kind", "id", "expires_at")
     VALUES ($1, $2, (clock_timestamp() at time zone 'utc') + make_interval(secs => $3))
     ON CONFLICT ("kind", "id") DO UPDATE SET "expires_at" = GREATEST(${qualified(schema, REVOCATIONS_TABLE)}."expires_at", EXCLUDED."expires_at")`,
    [kind, id, Math.max(1, Math.ceil(expiresInSeconds))],
  );
}

export interface RevokedSets {
  tokens: Set<string>;
  grants: Set<string>;
}

/** What is revoked now (expired records are left out and pruned). */
export async function loadRevocations(q: Queryable, schema: string): Promise<RevokedSets> {
  const table = qualified(schema, REVOCATIONS_TABLE);
  await q.query(`DELETE FROM ${table} WHERE "expires_at" < (clock_timestamp() at time zone 'utc')`);
  const { rows } = await q.query<{ kind: string; id: string }>(`SELECT "kind", "id" FROM ${table}`);
  const sets: RevokedSets = { tokens: new Set(), grants: new Set() };
  for (const r of rows) (r.kind === 'grant' ? sets.grants : sets.tokens).add(r.id);
  return sets;
}
