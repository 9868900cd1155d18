import { AUTH_TABLE } from '@quire/auth';
import { qualified, type Transaction } from '@quire/db';
import { NameError, ValidationError } from '@quire/errors';
import type { Meta } from '@quire/meta';
import { hasPermission } from '@quire/permissions';
import type { DocContext, DocData } from './context';
import { deleteDoc } from './lifecycle';
import { validateName } from './naming';
import { mapWriteError, selectRow, storedName } from './storage';

/**
 * Renaming a document (frappe/model/rename_doc.py): the row takes the new name, its child rows
 * follow, and every Link (and Dynamic Link) value naming it, in any DocType, Singles included,
 * is rewritten, all in one transaction. With `merge`, the document is folded into an existing
 * one of the new name instead: links move to it and the old document is deleted.
 */

export interface RenameOptions {
  /** Frappe's merge: `newName` must exist; links move to it and `oldName` is deleted. */
  merge?: boolean;
  /** Trusted callers (Frappe's ignore_permissions + force): no write permission or allow_rename check. */
  ignorePermissions?: boolean;
}

/**
 * Records whose names other state depends on beyond Link fields (credential and role caches,
 * the metadata itself): renaming them needs rename hooks in their controllers, which do not exist yet.
 */
const NOT_RENAMEABLE = new Set(['DocType', 'User', 'Role']);

/** DocTypes whose rows make up the metadata: a link rewritten there means the metadata changed. */
const METADATA_DOCTYPES = new Set(['DocType', 'DocField', 'DocPerm']);

function refuse(message: string, title = 'Cannot Rename'): never {
  throw new ValidationError(message, { title });
}

/** The requested new name as text (Frappe refuses an integer for a varchar name). */
function newNameText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') throw new NameError('Invalid name type (integer) for varchar name column', { title: 'Invalid Name' });
  return refuse('new_name is required');
}

/**
 * Renames `doctype`/`oldName` to `newName` and returns the name it now has (trimmed, as stored).
 * Refusals follow Frappe's validate_rename: a missing document, the same name, an existing
 * target (without merge) or a missing one (with merge), no write permission, a DocType without
 * allow_rename, and an invalid name are 417s (NameError 409 for a name validate_name refuses).
 */
export function renameDoc(ctx: DocContext, doctype: string, oldName: unknown, newName: unknown, options: RenameOptions = {}): Promise<string> {
  const meta = ctx.meta.require(doctype);
  if (NOT_RENAMEABLE.has(meta.name)) refuse(`${meta.name} records cannot be renamed`);
  if (meta.issingle) refuse(`${meta.name} is a Single DocType and cannot be renamed`);
  if (meta.istable) refuse(`Rows of the child table ${meta.name} cannot be renamed`);
  if (meta.namingRule === 'autoincrement') refuse(`${meta.name} is named by autoincrement and cannot be renamed`);
  const requested = newNameText(newName);
  const merge = options.merge === true;

  return ctx.db.transaction(async (tx) => {
    const inner: DocContext = ctx.db === tx ? ctx : { ...ctx, db: tx };
    const old = storedName(meta, oldName);
    const oldDoc = old === undefined ? undefined : await selectRow(tx, meta, old, true);
    if (!oldDoc || old === undefined) refuse(`Can't rename ${String(oldName)} to ${requested} because ${String(oldName)} doesn't exist.`);
    const oldText = String(old);
    const candidate: DocData = { name: requested };
    if (requested.trim() === oldText) refuse('No changes made because old and new name are the same.');
    const target = storedName(meta, requested.trim());
    const existing = target === undefined ? undefined : await selectRow(tx, meta, target, true);
    if (merge && !existing) refuse(`${meta.name} ${requested} does not exist, select a new target to merge`);
    if (!merge && existing) refuse(`Another ${meta.name} with name ${requested} exists, select another name`);
    if (!options.ignorePermissions) {
      if (!hasPermission(meta, ctx.principal, 'write', oldDoc)) refuse(`You need write permission on ${meta.name} ${oldText} to rename`, 'Not Permitted');
      if (existing && !hasPermission(meta, ctx.principal, 'write', existing)) {
        refuse(`You need write permission on ${meta.name} ${requested} to merge`, 'Not Permitted');
      }
      if (meta.definition.allow_rename !== 1) refuse(`${meta.name} not allowed to be renamed`);
    }
    validateName(meta, candidate);
    const name = String(candidate.name);

    if (!merge) await renameRow(inner, tx, meta, oldText, name);
    const metadataChanged = await rewriteLinks(inner, tx, meta, oldText, name);
    if (merge) await deleteDoc(inner, meta.name, oldText, { ignorePermissions: options.ignorePermissions === true });
    if (metadataChanged) await ctx.changes.metaChanged(tx, ctx.tenant);
    return name;
  });
}

/** The row, its `field:` autoname field, its child rows, its stored secrets and its global search entry take the new name. */
async function renameRow(ctx: DocContext, tx: Transaction, meta: Meta, old: string, name: string): Promise<void> {
  try {
    await tx.query(`UPDATE ${meta.table} SET "name" = $1 WHERE "name" = $2`, [name, old]);
  } catch (e) {
    throw mapWriteError(e, meta, { name });
  }
  // Frappe's update_autoname_field: a document named by a field keeps that field equal to its name.
  const autonameColumn = meta.namingRule === 'field' ? meta.column(meta.namingArgument) : undefined;
  if (autonameColumn?.field) {
    try {
      await tx.query(`UPDATE ${meta.table} SET ${autonameColumn.sql} = $1 WHERE "name" = $1`, [name]);
    } catch (e) {
      throw mapWriteError(e, meta, { name });
    }
  }
  const children = new Set(meta.tableFields.map((f) => f.options ?? ''));
  for (const child of children) {
    const childMeta = ctx.meta.get(child);
    if (!childMeta) continue;
    await tx.query(`UPDATE ${childMeta.table} SET "parent" = $1 WHERE "parent" = $2 AND "parenttype" = $3`, [name, old, meta.name]);
  }
  await tx.query(`UPDATE ${qualified(ctx.tenant.schema, AUTH_TABLE)} SET "name" = $1 WHERE "doctype" = $2 AND "name" = $3`, [name, meta.name, old]);
  await tx.query(`UPDATE ${qualified(ctx.tenant.schema, '__global_search')} SET "name" = $1 WHERE "doctype" = $2 AND "name" = $3`, [name, meta.name, old]);
}

/**
 * Every Link to `meta` holding `old`, and every Dynamic Link whose type column names `meta`,
 * now holds `name` (Frappe's update_link_field_values and rename_dynamic_links; `modified` is
 * left alone, as Frappe does). Returns whether a metadata row was rewritten.
 */
async function rewriteLinks(ctx: DocContext, tx: Transaction, meta: Meta, old: string, name: string): Promise<boolean> {
  const singles = qualified(ctx.tenant.schema, 'tabSingles');
  let metadataChanged = false;
  for (const other of ctx.meta.all()) {
    for (const f of other.dataFields) {
      const isLink = f.fieldtype === 'Link' && f.options === meta.name;
      const isDynamic = f.fieldtype === 'Dynamic Link' && f.options !== undefined;
      if (!isLink && !isDynamic) continue;
      if (other.issingle) {
        if (isLink) {
          await tx.query(`UPDATE ${singles} SET "value" = $1 WHERE "doctype" = $2 AND "field" = $3 AND "value" = $4`, [name, other.name, f.fieldname, old]);
        } else {
          await tx.query(
            `UPDATE ${singles} SET "value" = $1 WHERE "doctype" = $2 AND "field" = $3 AND "value" = $4
               AND EXISTS (SELECT 1 FROM ${singles} t WHERE t."doctype" = $2 AND t."field" = $5 AND t."value" = $6)`,
            [name, other.name, f.fieldname, old, f.options, meta.name],
          );
        }
        continue;
      }
      const column = other.column(f.fieldname);
      if (!column) continue;
      let rowCount: number;
      if (isLink) {
        ({ rowCount } = await tx.query(`UPDATE ${other.table} SET ${column.sql} = $1 WHERE ${column.sql} = $2`, [name, old]));
      } else {
        const typeColumn = other.column(f.options ?? '');
        if (!typeColumn) continue;
        ({ rowCount } = await tx.query(`UPDATE ${other.table} SET ${column.sql} = $1 WHERE ${typeColumn.sql} = $2 AND ${column.sql} = $3`, [
          name,
          meta.name,
          old,
        ]));
      }
      if (rowCount > 0 && METADATA_DOCTYPES.has(other.name)) metadataChanged = true;
    }
  }
  return metadataChanged;
}
