import { Meta, TenantMeta, parseDefinition, type DocTypeInput } from '@quire/meta';
import { makePrincipal, type Principal } from '@quire/permissions';
import { countStatement, listStatement, type CompileContext, type CompiledList, type CompiledQuery, type ListParams } from '../src/index';

/** Test DocTypes, principals and small helpers shared by the query tests. */

export const SCHEMA = 't_test';

const PERMS = [
  { role: 'System Manager', read: 1, write: 1, create: 1 },
  { role: 'Owner Only', read: 1, write: 1, create: 1, if_owner: 1 },
  { role: 'Secret Reader', permlevel: 1, read: 1 },
];

export const DEFINITIONS: DocTypeInput[] = [
  {
    name: 'Task Item',
    istable: 1,
    fields: [
      { fieldname: 'item', fieldtype: 'Data' },
      { fieldname: 'qty', fieldtype: 'Int' },
      { fieldname: 'rate', fieldtype: 'Float' },
      { fieldname: 'cost', fieldtype: 'Currency', permlevel: 1 },
    ],
  },
  { name: 'Task Note', istable: 1, fields: [{ fieldname: 'note', fieldtype: 'Text' }] },
  {
    name: 'Category',
    is_tree: 1,
    permissions: PERMS,
    fields: [{ fieldname: 'title', fieldtype: 'Data' }],
  },
  {
    name: 'Project',
    permissions: [
      { role: 'System Manager', read: 1 },
      { role: 'Owner Only', read: 1, if_owner: 1 },
    ],
    fields: [
      { fieldname: 'title', fieldtype: 'Data' },
      { fieldname: 'budget', fieldtype: 'Currency', permlevel: 1 },
    ],
  },
  {
    name: 'Vault',
    permissions: [{ role: 'Vault Keeper', read: 1 }],
    fields: [{ fieldname: 'code', fieldtype: 'Data' }],
  },
  {
    name: 'Task',
    permissions: PERMS,
    fields: [
      { fieldname: 'subject', fieldtype: 'Data' },
      { fieldname: 'status', fieldtype: 'Select', options: 'Open\nClosed' },
      { fieldname: 'description', fieldtype: 'Text' },
      { fieldname: 'due', fieldtype: 'Date' },
      { fieldname: 'at', fieldtype: 'Datetime' },
      { fieldname: 'tm', fieldtype: 'Time' },
      { fieldname: 'qty', fieldtype: 'Int' },
      { fieldname: 'amount', fieldtype: 'Currency' },
      { fieldname: 'duration', fieldtype: 'Duration' },
      { fieldname: 'done', fieldtype: 'Check' },
      { fieldname: 'data', fieldtype: 'JSON' },
      { fieldname: 'category', fieldtype: 'Link', options: 'Category' },
      { fieldname: 'project', fieldtype: 'Link', options: 'Project' },
      { fieldname: 'vault', fieldtype: 'Link', options: 'Vault' },
      { fieldname: 'items', fieldtype: 'Table', options: 'Task Item' },
      { fieldname: 'extra_items', fieldtype: 'Table', options: 'Task Item' },
      { fieldname: 'notes', fieldtype: 'Table', options: 'Task Note' },
      { fieldname: 'secret', fieldtype: 'Data', permlevel: 1 },
    ],
  },
  {
    name: 'Sorted',
    sort_field: 'modified desc, subject',
    sort_order: 'ASC',
    permissions: PERMS,
    fields: [{ fieldname: 'subject', fieldtype: 'Data' }],
  },
  {
    name: 'Plain Sort',
    sort_field: 'subject',
    sort_order: 'ASC',
    permissions: PERMS,
    fields: [{ fieldname: 'subject', fieldtype: 'Data' }],
  },
];

export function buildTenant(schema = SCHEMA): TenantMeta {
  return new TenantMeta(
    schema,
    DEFINITIONS.map((d) => new Meta(parseDefinition(d), schema)),
  );
}

export const tenant = buildTenant();

export function meta(doctype: string, t: TenantMeta = tenant): Meta {
  return t.require(doctype);
}

export const ADMIN: Principal = makePrincipal('Administrator', []);
export const MANAGER: Principal = makePrincipal('manager@example.com', ['System Manager']);
export const OWNER: Principal = makePrincipal('owner@example.com', ['Owner Only']);
export const NOBODY: Principal = makePrincipal('nobody@example.com', ['Some Role']);
export const SECRET_READER: Principal = makePrincipal('reader@example.com', ['System Manager', 'Secret Reader']);

export const TODAY = '2024-05-15'; // a Wednesday

export function ctx(doctype = 'Task', principal: Principal = ADMIN, extra: Partial<CompileContext> = {}): CompileContext {
  return { meta: meta(doctype), tenant, principal, maxPageLength: 500, today: TODAY, ...extra };
}

export function list(params: ListParams, doctype = 'Task', principal: Principal = ADMIN, extra: Partial<CompileContext> = {}): CompiledList {
  return listStatement(params, ctx(doctype, principal, extra));
}

/** The WHERE condition and values of a count over Task (Administrator: no permission predicate). */
export function where(filters: unknown, principal: Principal = ADMIN, doctype = 'Task', orFilters?: unknown): CompiledQuery {
  const q = countStatement({ filters, or_filters: orFilters }, ctx(doctype, principal));
  const marker = ' WHERE ';
  return { text: q.text.slice(q.text.indexOf(marker) + marker.length), values: q.values };
}

/** The one condition a single filter compiles to. */
export function cond(field: string, operator: string, value: unknown, doctype = 'Task'): CompiledQuery {
  return where([[field, operator, value]], ADMIN, doctype);
}

/** Captures what a function throws (for instanceof / httpStatus / message assertions). */
export function thrown(fn: () => unknown): { error: unknown; message: string; status: number | undefined } {
  try {
    fn();
  } catch (error) {
    const e = error as { message?: string; httpStatus?: number };
    return { error, message: e.message ?? '', status: e.httpStatus };
  }
  throw new Error('expected a throw');
}
