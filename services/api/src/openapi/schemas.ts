import { CHILD_FIELDS, fieldTypeSpec, VARCHAR_LEN, type DocField, type Meta, type TenantMeta } from '@quire/meta';
import { permittedLevels, type Principal } from '@quire/permissions';

/**
 * A DocType as JSON Schema (2020-12, OpenAPI 3.1's dialect), in the wire forms the record API
 * answers (db/types.ts, meta/coerce.ts): the document as read (`<Name>`), what a write may send
 * (`<Name>_Write`), and a list row (`<Name>_Row`). Fields the caller may not read are left out.
 */

export type JsonSchema = Record<string, unknown>;

/** `2025-06-01 10:20:30` with up to six fractional digits: Frappe's datetime, in UTC (not RFC 3339). */
export const DATETIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?$';
const TIME_PATTERN = '^\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?$';

/** A component name from a DocType name (`Webhook Request Log` -> `Webhook_Request_Log`). */
export function componentName(doctype: string): string {
  return doctype.replace(/[^A-Za-z0-9._-]+/g, '_');
}

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

function selectOptions(field: DocField): string[] {
  return (field.options ?? '')
    .split('\n')
    .map((o) => o.trim())
    .filter((o) => o !== '');
}

/** One field's value as the API answers it (`write`: as a client may send it). */
function fieldSchema(field: DocField, write: boolean): JsonSchema {
  const spec = fieldTypeSpec(field.fieldtype);
  const label = field.label ?? field.fieldname;
  const s: JsonSchema = { title: label, 'x-frappe-fieldtype': field.fieldtype };
  if (field.description) s.description = field.description;
  switch (spec.kind) {
    case 'int':
      if (field.fieldtype === 'Check') Object.assign(s, { type: 'integer', enum: [0, 1] });
      else s.type = 'integer';
      break;
    case 'check':
      Object.assign(s, { type: 'integer', enum: [0, 1] });
      break;
    case 'float':
      s.type = 'number';
      if (field.non_negative) s.minimum = 0;
      break;
    case 'date':
      Object.assign(s, { type: 'string', format: 'date' });
      break;
    case 'datetime':
      Object.assign(s, { type: 'string', pattern: DATETIME_PATTERN, description: withNote(field, 'Date and time, UTC: YYYY-MM-DD HH:MM:SS[.ffffff]') });
      break;
    case 'time':
      Object.assign(s, { type: 'string', pattern: TIME_PATTERN });
      break;
    case 'json':
      // Stored JSON comes back as its text; a write may send the value itself or its text.
      if (!write) Object.assign(s, { type: 'string', contentMediaType: 'application/json' });
      break;
    default: {
      s.type = 'string';
      if (spec.varchar) s.maxLength = field.length && field.length > 0 ? field.length : VARCHAR_LEN;
      if (field.fieldtype === 'Select') {
        const options = selectOptions(field);
        if (options.length > 0) s.enum = field.reqd ? options : [...options, ''];
      }
      if (field.fieldtype === 'Link' && field.options) {
        s['x-frappe-link'] = field.options;
        s.description = withNote(field, `The name of a ${field.options}`);
      }
      if (field.fieldtype === 'Dynamic Link' && field.options) s.description = withNote(field, `The name of a document of the DocType in \`${field.options}\``);
      if (field.fieldtype === 'Data' && field.options === 'Email') s.format = 'email';
    }
  }
  if (field.read_only || field.fieldtype === 'Read Only') s.readOnly = true;
  return s;
}

function withNote(field: DocField, note: string): string {
  return field.description ? `${note}. ${field.description}` : note;
}

const STANDARD_READ: Record<string, JsonSchema> = {
  name: { type: 'string', title: 'ID' },
  owner: { type: 'string', readOnly: true, title: 'Created By' },
  creation: { type: 'string', pattern: DATETIME_PATTERN, readOnly: true, title: 'Created On' },
  modified: {
    type: 'string',
    pattern: DATETIME_PATTERN,
    readOnly: true,
    title: 'Last Updated On',
    description: 'The version: a write may send it back to refuse a stale save (TimestampMismatchError)',
  },
  modified_by: { type: 'string', readOnly: true, title: 'Last Updated By' },
  docstatus: { type: 'integer', enum: [0, 1, 2], title: 'Document Status', description: '0 draft, 1 submitted, 2 cancelled' },
  idx: { type: 'integer', readOnly: true, title: 'Index' },
};

const CHILD_READ: Record<string, JsonSchema> = {
  parent: { type: 'string', readOnly: true },
  parentfield: { type: 'string', readOnly: true },
  parenttype: { type: 'string', readOnly: true },
};

/** The fields of `meta` the caller may read, in definition order (layout fields have no value). */
function readableFields(meta: Meta, principal: Principal): DocField[] {
  const hidden = permittedLevels(meta, principal).hidden;
  return meta.fields.filter((f) => !hidden.has(f.fieldname) && fieldTypeSpec(f.fieldtype).kind !== 'none');
}

export interface DocTypeSchemas {
  /** Component name -> schema: the DocType's own three and its child tables'. */
  schemas: Record<string, JsonSchema>;
}

/**
 * The schemas of a DocType and of its child tables, for a caller whose hidden fields are left out.
 * `<Name>` has `required` (the standard fields, the mandatory fields, Table fields: always present
 * in an answer), `<Name>_Write` none (an update merges), `<Name>_Row` is a list row.
 */
export function docTypeSchemas(tenant: TenantMeta, meta: Meta, principal: Principal, into: Record<string, JsonSchema>): void {
  const name = componentName(meta.name);
  if (into[name]) return;
  const fields = readableFields(meta, principal);
  const read: Record<string, JsonSchema> = { ...STANDARD_READ, ...(meta.istable ? CHILD_READ : {}) };
  const write: Record<string, JsonSchema> = {
    name: { type: 'string', description: 'Only where the DocType is named by the user (autoname Prompt); otherwise ignored' },
    docstatus: STANDARD_READ.docstatus as JsonSchema,
  };
  if (!meta.istable) write.modified = { ...(STANDARD_READ.modified as JsonSchema), readOnly: false };
  const required = ['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus', 'idx', 'doctype', ...(meta.istable ? CHILD_FIELDS : [])];
  for (const field of fields) {
    const kind = fieldTypeSpec(field.fieldtype).kind;
    if (kind === 'table') {
      const child = field.options ? tenant.get(field.options) : undefined;
      if (!child) continue;
      docTypeSchemas(tenant, child, principal, into);
      const childName = componentName(child.name);
      read[field.fieldname] = { type: 'array', title: field.label ?? field.fieldname, items: ref(childName), 'x-frappe-fieldtype': field.fieldtype };
      write[field.fieldname] = {
        type: 'array',
        items: ref(`${childName}_Write`),
        description: 'Replaces the rows: rows with a `name` are kept and updated, the others added',
      };
      required.push(field.fieldname);
      continue;
    }
    read[field.fieldname] = fieldSchema(field, false);
    if (!field.read_only && field.fieldtype !== 'Read Only') write[field.fieldname] = fieldSchema(field, true);
    // NOT NULL columns (numbers, checks) are always answered; other mandatory fields too, once saved.
    if (field.reqd || fieldTypeSpec(field.fieldtype).notNull) required.push(field.fieldname);
  }
  read.doctype = { const: meta.name };
  if (meta.istable) write.name = { type: 'string', description: 'A row to keep (as answered before); a row without one is added' };
  const title = meta.name;
  const description = meta.definition.description ?? undefined;
  into[name] = { type: 'object', title, ...(description ? { description } : {}), properties: read, required, 'x-frappe-doctype': meta.name };
  into[`${name}_Write`] = { type: 'object', title: `${title} (write)`, properties: write, additionalProperties: true };
  into[`${name}_Row`] = {
    type: 'object',
    title: `${title} (list row)`,
    description: 'The fields asked for in `fields` (only `name` by default); aggregates and aliases add their own keys',
    properties: read,
    additionalProperties: true,
  };
}

/** The mandatory fields a create must send, as a `required` list beside `<Name>_Write`. */
export function createRequired(meta: Meta, principal: Principal): string[] {
  const hidden = permittedLevels(meta, principal).hidden;
  const out = meta.fields
    .filter((f) => f.reqd && !hidden.has(f.fieldname) && !f.default && fieldTypeSpec(f.fieldtype).kind !== 'table' && !f.read_only)
    .map((f) => f.fieldname);
  if (meta.namingRule === 'prompt') out.unshift('name');
  return out;
}
