import type { Queryable } from '@quire/db';
import type { FileStore } from '@quire/documents';

/**
 * A dropped tenant's uploaded files, removed by the processes that hold the file store. A drop
 * records the tenant's schema here in its own transaction (so no crash loses it), and whichever
 * process it ran in, the files go when an API process (the one with the files volume) next
 * purges: at once on the drop's notification, and every minute. Until then a tenant of the same
 * name cannot be made, so no tenant ever sees another's files.
 */
export const FILE_PURGES_TABLE = 'quire.tenant_file_purges';

export async function createFilePurgesTable(q: Queryable): Promise<void> {
  await q.query(`CREATE TABLE ${FILE_PURGES_TABLE} (
    "schema" text PRIMARY KEY,
    "dropped_at" timestamp(6) NOT NULL DEFAULT now()
  )`);
}

/** In the drop's transaction: the schema's files are to go. */
export async function recordFilePurge(tx: Queryable, schema: string): Promise<void> {
  await tx.query(`INSERT INTO ${FILE_PURGES_TABLE} ("schema") VALUES ($1) ON CONFLICT ("schema") DO NOTHING`, [schema]);
}

/** Whether files of a dropped tenant with this schema are still waiting to be removed. */
export async function filePurgePending(q: Queryable, schema: string): Promise<boolean> {
  const { rows } = await q.query(`SELECT 1 FROM ${FILE_PURGES_TABLE} WHERE "schema" = $1`, [schema]);
  return rows.length > 0;
}

/** Removes the files of dropped tenants (a batch at a time); returns how many tenants' files went. */
export async function purgeDroppedFiles(db: Queryable, files: FileStore): Promise<number> {
  const { rows } = await db.query<{ schema: string }>(`SELECT "schema" FROM ${FILE_PURGES_TABLE} ORDER BY "dropped_at" LIMIT 100`);
  for (const { schema } of rows) {
    await files.deleteAll(schema);
    await db.query(`DELETE FROM ${FILE_PURGES_TABLE} WHERE "schema" = $1`, [schema]);
  }
  return rows.length;
}
