import { deleteSecrets, readSecretHash, storeEncryptedSecret, type SecretBox } from '@quire/auth';
import type { Queryable } from '@quire/db';
import type { Meta, TenantMeta } from '@quire/meta';
import type { DocContext, DocData } from './context';

/**
 * Password fields (Frappe's __Auth): the document column only ever holds asterisks; a new value is
 * encrypted into `__Auth` so the platform can use it later (a webhook's signing secret, an SMTP
 * password). Values that are all asterisks are the stored mask coming back. Login passwords and
 * API secrets never take this path: the User controller hashes them.
 */
export async function storePasswords(q: Queryable, schema: string, secrets: SecretBox, tenant: TenantMeta, meta: Meta, doc: DocData): Promise<void> {
  await storeRowPasswords(q, schema, secrets, meta, doc);
  for (const f of meta.tableFields) {
    const child = tenant.require(f.options ?? '');
    if (!child.dataFields.some((x) => x.fieldtype === 'Password')) continue;
    for (const row of (doc[f.fieldname] as DocData[] | undefined) ?? []) await storeRowPasswords(q, schema, secrets, child, row);
  }
}

async function storeRowPasswords(q: Queryable, schema: string, secrets: SecretBox, meta: Meta, row: DocData): Promise<void> {
  for (const f of meta.dataFields) {
    if (f.fieldtype !== 'Password') continue;
    const value = row[f.fieldname];
    if (typeof value !== 'string' || value === '' || /^\*+$/.test(value)) continue;
    await storeEncryptedSecret(q, schema, meta.name, String(row.name), f.fieldname, secrets.encrypt(value));
    row[f.fieldname] = '*'.repeat(Math.min(value.length, 140));
  }
}

export async function forgetPasswords(q: Queryable, schema: string, meta: Meta, name: string): Promise<void> {
  if (meta.dataFields.some((f) => f.fieldtype === 'Password')) await deleteSecrets(q, schema, meta.name, name);
}

/** A Password field's value (Frappe's get_decrypted_password), or undefined when none is stored. */
export async function getPassword(
  ctx: Pick<DocContext, 'db' | 'tenant' | 'secrets'>,
  doctype: string,
  name: string,
  fieldname: string,
): Promise<string | undefined> {
  const sealed = await readSecretHash(ctx.db, ctx.tenant.schema, doctype, name, fieldname);
  return sealed === undefined ? undefined : ctx.secrets.decrypt(sealed);
}
