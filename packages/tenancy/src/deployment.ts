import { randomBytes } from 'node:crypto';
import type { Queryable } from '@quire/db';

/**
 * This deployment's id: made once, kept in `quire.settings`, the same for every process on the
 * database whatever URL reaches it (direct, or through a pooler). It keeps what the processes of
 * one deployment share outside Postgres (the webhook queue in Redis) apart from another's.
 */
export async function loadDeploymentId(db: Queryable): Promise<string> {
  await db.query(`INSERT INTO quire.settings ("key", "value") VALUES ('deployment_id', $1) ON CONFLICT ("key") DO NOTHING`, [randomBytes(6).toString('hex')]);
  const { rows } = await db.query<{ value: string }>(`SELECT "value" FROM quire.settings WHERE "key" = 'deployment_id'`);
  const id = rows[0]?.value;
  if (id === undefined) throw new Error('quire.settings has no deployment_id after inserting one');
  return id;
}
