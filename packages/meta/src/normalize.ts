import { ValidationError } from '@quire/errors';
import { docFieldSchema, docTypeSchema, type DocField, type DocTypeDefinition } from './definition';
import { fieldTypeSpec } from './fieldtypes';
import { RESERVED_FIELDNAMES, type TenantMeta } from './meta';

/** Parses a definition (JSON file or API body); a malformed one is a 417 naming the offending path. */
export function parseDefinition(input: unknown): DocTypeDefinition {
  const result = docTypeSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'DocType';
    throw new ValidationError(`Invalid DocType definition at ${where}: ${issue?.message ?? 'invalid'}`, { title: 'Invalid DocType' });
  }
  return normalizeDefinition(result.data);
}

const NAMING_RULE_TO_AUTONAME: Record<string, string> = {
  Random: 'hash',
  Autoincrement: 'autoincrement',
  'Set by user': 'prompt',
  UUID: 'UUID',
};

/** Frappe's make_amendable and tree fields, and autoname from naming_rule: applied before every save. */
export function normalizeDefinition(def: DocTypeDefinition): DocTypeDefinition {
  const fields = [...def.fields];
  const has = (fieldname: string) => fields.some((f) => f.fieldname === fieldname);
  const blank = (f: Partial<DocField> & Pick<DocField, 'fieldname' | 'fieldtype'>): DocField => ({ ...emptyField, ...f });

  if (def.is_submittable && !def.istable && !has('amended_from')) {
    fields.push(blank({ fieldname: 'amended_from', label: 'Amended From', fieldtype: 'Link', options: def.name, read_only: 1, no_copy: 1, search_index: 1 }));
  }
  let nsmParent = def.nsm_parent_field;
  if (def.is_tree) {
    nsmParent ??= `parent_${def.name.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`;
    if (!has(nsmParent)) fields.push(blank({ fieldname: nsmParent, label: `Parent ${def.name}`, fieldtype: 'Link', options: def.name }));
    if (!has('is_group')) fields.push(blank({ fieldname: 'is_group', label: 'Is Group', fieldtype: 'Check' }));
  }
  let autoname = def.autoname;
  if (!autoname && def.naming_rule && NAMING_RULE_TO_AUTONAME[def.naming_rule]) autoname = NAMING_RULE_TO_AUTONAME[def.naming_rule];
  return {
    ...def,
    fields,
    ...(autoname !== undefined ? { autoname } : {}),
    ...(nsmParent !== undefined ? { nsm_parent_field: nsmParent } : {}),
  };
}

const emptyField: DocField = docFieldSchema.parse({ fieldname: 'x' });

/**
 * Checks a definition against the other DocTypes of its tenant: what Frappe's DocType controller
 * validates, plus what our storage needs (no column can collide, Link and Table targets exist).
 */
export function validateDefinition(def: DocTypeDefinition, tenant: TenantMeta): void {
  const fail = (message: string): never => {
    throw new ValidationError(message, { title: 'Invalid DocType' });
  };
  if (def.istable && def.issingle) fail('A DocType cannot be both a child table and a Single');
  if (def.istable && def.is_submittable) fail('A child table cannot be submittable');
  if (def.issingle && def.is_submittable) fail('A Single DocType cannot be submittable');

  const seen = new Set<string>();
  for (const f of def.fields) {
    if (seen.has(f.fieldname)) fail(`Fieldname ${f.fieldname} appears more than once`);
    seen.add(f.fieldname);
    if (RESERVED_FIELDNAMES.has(f.fieldname)) fail(`Fieldname ${f.fieldname} is reserved`);
    const spec = fieldTypeSpec(f.fieldtype);
    if (f.fieldtype === 'Link') {
      if (!f.options) fail(`Options required for Link field ${f.fieldname}`);
      else if (f.options !== def.name && !tenant.get(f.options)) fail(`Options for ${f.fieldname} must be a DocType: ${f.options} not found`);
    }
    if (f.fieldtype === 'Dynamic Link') {
      const source = def.fields.find((x) => x.fieldname === f.options);
      if (!source) fail(`Options for Dynamic Link field ${f.fieldname} must name a field of this DocType`);
    }
    if (spec.kind === 'table') {
      const child = f.options ? tenant.get(f.options) : undefined;
      if (!child || !child.istable) fail(`Options for Table field ${f.fieldname} must be a child table DocType`);
      if (def.istable) fail(`A child table cannot have a Table field (${f.fieldname})`);
    }
    if (f.unique && spec.column && !spec.varchar && spec.kind === 'text') fail(`Field ${f.fieldname} of type ${f.fieldtype} cannot be unique`);
    if (f.length !== undefined && (f.length < 1 || f.length > 10_000)) fail(`Length of ${f.fieldname} must be between 1 and 10000`);
    if (f.precision !== undefined && (f.precision < 0 || f.precision > 9)) fail(`Precision of ${f.fieldname} must be between 0 and 9`);
    if ((f.permlevel ?? 0) < 0 || (f.permlevel ?? 0) > 9) fail(`Perm level of ${f.fieldname} must be between 0 and 9`);
  }
  const column = (name: string) =>
    ['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus', 'idx'].includes(name) ||
    def.fields.some((f) => f.fieldname === name && fieldTypeSpec(f.fieldtype).column);
  if (def.sort_field && !def.sort_field.split(',').every((s) => column(s.trim().split(/\s+/)[0] ?? ''))) {
    fail(`Sort field ${def.sort_field} must be a valid fieldname`);
  }
  if (def.title_field && !def.fields.some((f) => f.fieldname === def.title_field)) fail(`Title field ${def.title_field} must be a valid fieldname`);

  const autoname = (def.autoname ?? '').trim();
  const lower = autoname.toLowerCase();
  if (lower.startsWith('field:')) {
    const target = autoname.slice(6).trim();
    if (!def.fields.some((f) => f.fieldname === target)) fail(`Invalid fieldname '${target}' in autoname`);
  } else if (lower.startsWith('naming_series:')) {
    const ns = def.fields.find((f) => f.fieldname === 'naming_series');
    if (!ns || ns.fieldtype !== 'Select' || !ns.options) fail('Naming Series requires a Select field naming_series with the series as options');
  } else if (lower.startsWith('format:')) {
    const tokens = [...autoname.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? '');
    const series = tokens.filter((t) => /^#+$/.test(t));
    if (series.length > 1) fail('Only one series (#) is allowed in a format: autoname');
    for (const t of tokens) {
      if (/^#+$/.test(t) || ['YY', 'YYYY', 'MM', 'DD', 'WW', 'timestamp', 'hash'].includes(t)) continue;
      if (!def.fields.some((f) => f.fieldname === t)) fail(`Invalid fieldname '${t}' in autoname`);
    }
  } else if (autoname !== '' && !['hash', 'autoincrement', 'prompt', 'uuid'].includes(lower) && !autoname.includes('#')) {
    fail(`Invalid autoname ${autoname}: use hash, autoincrement, prompt, UUID, field:, naming_series:, format: or a series with #`);
  }
  if (def.issingle && lower === 'autoincrement') fail('A Single DocType cannot be autoincrement');
  if (def.is_tree && def.nsm_parent_field && !def.fields.some((f) => f.fieldname === def.nsm_parent_field)) {
    fail(`Parent field ${def.nsm_parent_field} of a tree must be a field`);
  }
  for (const p of def.permissions) {
    if (p.permlevel < 0 || p.permlevel > 9) fail('Perm level must be between 0 and 9');
  }
}
