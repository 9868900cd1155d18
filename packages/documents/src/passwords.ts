import { deleteSecrets, hashPassword, storeSecretHash } from '@quire/auth';
import type { Queryable } from '@quire/db';
import type { Meta, TenantMeta } from '@quire/meta';
import type { DocData } from './context';

/**
 * Password fields: the document column only ever holds asterisks; a new value is hashed
 * (memory-hard) into `__Auth`. Values that are all asterisks are the stored mask coming back.
 */
export async function storePasswords(q: Queryable, schema: string, tenant: TenantMeta, meta: Meta, doc: DocData): Promise<void> {
  await storeRowPasswords(q, schema, meta, doc);
  for (const f of meta.tableFields) {
    const child = tenant.require(f.options ?? '');
    if (!child.dataFields.some((x) => x.fieldtype === 'Password')) continue;
    for (const row of (doc[f.fieldname] as DocData[] | undefined) ?? []) await storeRowPasswords(q, schema, child, row);
  }
}

async function storeRowPasswords(q: Queryable, schema: string, meta: Meta, row: DocData): Promise<void> {
  for (const f of meta.dataFields) {
    if (f.fieldtype !== 'Password') continue;
    const value = row[f.fieldname];
    if (typeof value !== 'string' || value === '' || /^\*+$/.test(value)) continue;
    await storeSecretHash(q, schema, meta.name, String(row.name), f.fieldname, await hashPassword(value));
    row[f.fieldname] = '*'.repeat(Math.min(value.length, 140));
  }
}

export async function forgetPasswords(q: Queryable, schema: string, meta: Meta, name: string): Promise<void> {
  if (meta.dataFields.some((f) => f.fieldtype === 'Password')) await deleteSecrets(q, schema, meta.name, name);
}
