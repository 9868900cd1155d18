import { qualified, type Queryable } from '@quire/db';

/**
 * `__Auth` (Frappe's name): hashed secrets kept out of document tables, which only ever hold
 * asterisks. One row per (doctype, name, fieldname).
 */
export const AUTH_TABLE = '__Auth';

export function authTableDDL(schema: string): string {
  return `CREATE TABLE IF NOT EXISTS ${qualified(schema, AUTH_TABLE)} (
  "doctype" varchar(140) NOT NULL,
  "name" varchar(255) NOT NULL,
  "fieldname" varchar(140) NOT NULL,
  "password" text NOT NULL,
  "encrypted" smallint NOT NULL DEFAULT 0,
  PRIMARY KEY ("doctype", "name", "fieldname")
)`;
}

export async function storeSecretHash(q: Queryable, schema: string, doctype: string, name: string, fieldname: string, hash: string): Promise<void> {
  await q.query(
    `INSERT INTO ${qualified(schema, AUTH_TABLE)} ("doctype", "name", "fieldname", "password", "encrypted")
     VALUES ($1, $2, $3, $4, 0)
     ON CONFLICT ("doctype", "name", "fieldname") DO UPDATE SET "password" = EXCLUDED."password"`,
    [doctype, name, fieldname, hash],
  );
}

export async function readSecretHash(q: Queryable, schema: string, doctype: string, name: string, fieldname: string): Promise<string | undefined> {
  const { rows } = await q.query<{ password: string }>(
    `SELECT "password" FROM ${qualified(schema, AUTH_TABLE)} WHERE "doctype" = $1 AND "name" = $2 AND "fieldname" = $3`,
    [doctype, name, fieldname],
  );
  return rows[0]?.password;
}

export async function deleteSecrets(q: Queryable, schema: string, doctype: string, name: string): Promise<void> {
  await q.query(`DELETE FROM ${qualified(schema, AUTH_TABLE)} WHERE "doctype" = $1 AND "name" = $2`, [doctype, name]);
}

/** Stores a Password field's value encrypted (reversible), as Frappe's set_encrypted_password. */
export async function storeEncryptedSecret(q: Queryable, schema: string, doctype: string, name: string, fieldname: string, sealed: string): Promise<void> {
  await q.query(
    `INSERT INTO ${qualified(schema, AUTH_TABLE)} ("doctype", "name", "fieldname", "password", "encrypted")
     VALUES ($1, $2, $3, $4, 1)
     ON CONFLICT ("doctype", "name", "fieldname") DO UPDATE SET "password" = EXCLUDED."password", "encrypted" = 1`,
    [doctype, name, fieldname, sealed],
  );
}
