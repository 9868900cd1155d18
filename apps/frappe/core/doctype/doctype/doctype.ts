import { pgErrorInfo } from '@quire/db';
import { newChildRow, type DocController, type DocData, type HookArgs } from '@quire/documents';
import { ValidationError } from '@quire/errors';
import {
  alterTableStatements,
  createTableStatements,
  dropTableStatements,
  Meta,
  parseDefinition,
  validateDefinition,
  type DocTypeDefinition,
} from '@quire/meta';

/**
 * A DocType is itself a document: saving one creates or alters its table in the same
 * transaction, and tells every process to reload the tenant's metadata when it commits.
 */

const FULL_ACCESS = { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1, report: 1, export: 1, share: 1, print: 1, email: 1 };

function definitionOf(doc: DocData): DocTypeDefinition {
  return parseDefinition(doc);
}

function refuseStandard({ doc, previous, flags }: HookArgs): void {
  if (flags.installing) return;
  if (previous && Number(previous.custom) === 0) {
    throw new ValidationError(`${String(doc.name)} is a standard DocType and cannot be changed or deleted through the API`, {
      title: 'Standard DocType',
    });
  }
  doc.custom = 1;
}

export const controller: DocController = {
  before_validate(args) {
    refuseStandard(args);
    const { doc, ctx, flags } = args;
    doc.module ||= 'Custom';
    if (flags.installing) return;
    const permissions = (doc.permissions as DocData[] | undefined) ?? [];
    if (permissions.length === 0) doc.permissions = [newChildRow(ctx.meta, 'DocPerm', ctx.principal, FULL_ACCESS)];
    // Fields the definition implies (amended_from, tree parent) are stored as real rows.
    const def = definitionOf(doc);
    const fields = (doc.fields as DocData[] | undefined) ?? [];
    const have = new Set(fields.map((f) => String(f.fieldname)));
    for (const f of def.fields) {
      if (!have.has(f.fieldname)) fields.push(newChildRow(ctx.meta, 'DocField', ctx.principal, { ...f }));
    }
    doc.fields = fields;
    if (def.autoname !== undefined) doc.autoname = def.autoname;
    doc.naming_rule ||= namingRuleOf(def.autoname);
    if (def.nsm_parent_field !== undefined) doc.nsm_parent_field = def.nsm_parent_field;
  },

  validate({ doc, ctx, flags }) {
    if (flags.installing) return;
    validateDefinition(definitionOf(doc), ctx.meta);
  },

  async on_update({ doc, previous, ctx, tx }) {
    const next = new Meta(definitionOf(doc), ctx.tenant.schema);
    const statements = previous ? alterTableStatements(new Meta(definitionOf(previous), ctx.tenant.schema), next) : createTableStatements(next);
    await runDdl(tx, statements, next.name);
    await ctx.changes.metaChanged(tx, ctx.tenant);
  },

  async on_trash(args) {
    refuseStandard(args);
    const { doc, ctx, tx } = args;
    const name = String(doc.name);
    const parents = ctx.meta.parentsOf(name).filter((m) => m.name !== name);
    if (parents.length > 0) {
      throw new ValidationError(`Cannot delete ${name}: it is a child table of ${parents.map((m) => m.name).join(', ')}`, { title: 'Linked DocType' });
    }
    await runDdl(tx, dropTableStatements(new Meta(definitionOf(doc), ctx.tenant.schema)), name);
    await ctx.changes.metaChanged(tx, ctx.tenant);
  },
};

/** The UI's naming_rule for an autoname (frappe/public/js/frappe/doctype/index.js). */
function namingRuleOf(autoname: string | undefined): string {
  const a = (autoname ?? '').trim().toLowerCase();
  if (a === '' || a === 'hash') return 'Random';
  if (a === 'autoincrement') return 'Autoincrement';
  if (a === 'prompt') return 'Set by user';
  if (a === 'uuid') return 'UUID';
  if (a.startsWith('field:')) return 'By fieldname';
  if (a.startsWith('naming_series:')) return 'By "Naming Series" field';
  if (a.startsWith('format:')) return 'Expression';
  return 'Expression (old style)';
}

/** Runs DDL; a change the data cannot take (e.g. text that is not a number) is a 417, and nothing is changed. */
async function runDdl(tx: HookArgs['tx'], statements: string[], doctype: string): Promise<void> {
  for (const sql of statements) {
    try {
      await tx.query(sql);
    } catch (e) {
      const info = pgErrorInfo(e);
      // data exceptions (22xxx), integrity violations (23xxx) and impossible casts (42804) are the data's fault
      if (!info || !(info.code.startsWith('22') || info.code.startsWith('23') || info.code === '42804')) throw e;
      const column = info.column ? ` (${info.column})` : '';
      throw new ValidationError(`Cannot apply this change to ${doctype}${column}: existing data does not fit the new definition`, {
        title: 'Cannot Change DocType',
        cause: e,
      });
    }
  }
}
