import { whitelist } from '@quire/apps';
import { PermissionError, ValidationError } from '@quire/errors';
import { metaDict } from '@quire/documents';
import { RIGHTS, type Meta, type Right, type TenantMeta } from '@quire/meta';
import { grantsOf, permittedLevels, readScope, type Principal } from '@quire/permissions';

/**
 * frappe.desk.form.load.getdoctype(doctype): the metadata a form or list is drawn from. As in
 * Frappe, the answer is in `docs` (not `message`): the DocType first, then the child DocTypes of
 * its Table fields. Fields the caller may not read (permlevel) are left out. Each doc also carries
 * `__perm`, the caller's rights (Frappe's desk works these out from `frappe.boot.user`, which Quire
 * has no boot for): document-level rights and the permlevels whose fields the caller may write.
 */

export interface DeskPermissions {
  rights: Record<Right, boolean>;
  /** Permlevels the caller may write; a field at any other level is read-only to them. */
  write_levels: number[];
}

function doctypeArg(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new ValidationError('doctype is required', { title: 'Missing Argument' });
  return value;
}

/** The caller's rights on `meta`, whose documents' rights come from `owner` (the parent, for a child table). */
function permissionsOf(meta: Meta, owner: Meta, principal: Principal): DeskPermissions {
  const grants = grantsOf(owner, principal);
  const rights = Object.fromEntries(RIGHTS.map((r) => [r, grants[r] !== false])) as Record<Right, boolean>;
  return { rights, write_levels: [...permittedLevels(meta, principal).write].sort((a, b) => a - b) };
}

/** The DocType as Frappe's meta dict (the readable fields), with the caller's rights. */
function describe(meta: Meta, owner: Meta, principal: Principal): Record<string, unknown> {
  return { ...metaDict(meta, principal), __perm: permissionsOf(meta, owner, principal) };
}

/** A child DocType is readable through a parent the caller may read. */
function readableThrough(tenant: TenantMeta, meta: Meta, principal: Principal): Meta | undefined {
  if (!meta.istable) return readScope(meta, principal) === false ? undefined : meta;
  return tenant.parentsOf(meta.name).find((parent) => readScope(parent, principal) !== false);
}

export const getdoctype = whitelist(
  (args, ctx) => {
    const { meta: tenant, principal } = ctx.doc;
    const meta = tenant.require(doctypeArg(args.doctype));
    const owner = readableThrough(tenant, meta, principal);
    if (!owner) throw new PermissionError(`No permission for ${meta.name}`, { title: 'Not Permitted' });
    const docs = [describe(meta, owner, principal)];
    for (const field of meta.tableFields) {
      const child = field.options ? tenant.get(field.options) : undefined;
      if (child && !docs.some((d) => d.name === child.name)) docs.push(describe(child, owner, principal));
    }
    ctx.response.set('docs', docs);
  },
  { methods: ['GET'], allowScopedTokens: true },
);
