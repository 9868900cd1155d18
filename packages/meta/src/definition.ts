import { z } from 'zod';
import { FIELD_TYPES, type FieldType } from './fieldtypes';

/**
 * A DocType definition in Frappe's meta JSON format (frappe-wire.md §6). The schema accepts the
 * JSON Frappe ships (unknown properties are dropped) and normalises 0/1 flags.
 */

const flag = z
  .union([z.boolean(), z.number(), z.string(), z.null()])
  .optional()
  .transform((v) => (v === true || v === 1 || v === '1' ? 1 : 0));

const optionalText = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((v) => (v === null || v === undefined || v === '' ? undefined : String(v)));

const optionalInt = z
  .union([z.number(), z.string(), z.null()])
  .optional()
  .transform((v, ctx) => {
    if (v === null || v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n)) {
      ctx.addIssue({ code: 'custom', message: `expected an integer, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return n;
  });

export const FIELDNAME_RE = /^[a-z_][a-z0-9_]{0,63}$/;
/** Leaves room for the `tab` prefix inside Postgres' 63-byte identifiers. */
export const DOCTYPE_NAME_RE = /^[A-Za-z][A-Za-z0-9 _-]{0,59}$/;

const fieldTypeNames = Object.keys(FIELD_TYPES) as [FieldType, ...FieldType[]];

export const docFieldSchema = z.object({
  fieldname: z.string().regex(FIELDNAME_RE, 'a fieldname is lower-case letters, digits and underscores'),
  label: optionalText,
  fieldtype: z.enum(fieldTypeNames).optional().default('Data'),
  options: optionalText,
  default: optionalText,
  reqd: flag,
  unique: flag,
  length: optionalInt.transform((v) => (v === 0 ? undefined : v)),
  precision: optionalInt,
  permlevel: optionalInt,
  read_only: flag,
  hidden: flag,
  allow_on_submit: flag,
  set_only_once: flag,
  non_negative: flag,
  no_copy: flag,
  search_index: flag,
  in_list_view: flag,
  in_standard_filter: flag,
  in_global_search: flag,
  bold: flag,
  ignore_xss_filter: flag,
  fetch_from: optionalText,
  fetch_if_empty: flag,
  depends_on: optionalText,
  mandatory_depends_on: optionalText,
  read_only_depends_on: optionalText,
  description: optionalText,
  is_virtual: flag,
  not_nullable: flag,
  /** Used by an update that keeps a row: present on rows read back from the database. */
  name: optionalText,
});

export type DocFieldInput = z.input<typeof docFieldSchema>;
export type DocField = z.output<typeof docFieldSchema>;

export const docPermSchema = z.object({
  role: z.string().min(1),
  permlevel: optionalInt.transform((v) => v ?? 0),
  if_owner: flag,
  select: flag,
  read: flag,
  write: flag,
  create: flag,
  delete: flag,
  submit: flag,
  cancel: flag,
  amend: flag,
  report: flag,
  export: flag,
  import: flag,
  share: flag,
  print: flag,
  email: flag,
  name: optionalText,
});

export type DocPerm = z.output<typeof docPermSchema>;

export const RIGHTS = [
  'select',
  'read',
  'write',
  'create',
  'delete',
  'submit',
  'cancel',
  'amend',
  'report',
  'export',
  'import',
  'share',
  'print',
  'email',
] as const;
export type Right = (typeof RIGHTS)[number];

export const docTypeSchema = z.object({
  name: z.string().regex(DOCTYPE_NAME_RE, 'a DocType name starts with a letter and has letters, digits, spaces, - and _ (60 at most)'),
  module: optionalText.transform((v) => v ?? 'Custom'),
  custom: flag,
  istable: flag,
  issingle: flag,
  is_submittable: flag,
  is_tree: flag,
  is_virtual: flag,
  editable_grid: flag,
  track_changes: flag,
  track_seen: flag,
  quick_entry: flag,
  read_only: flag,
  allow_rename: z
    .union([z.boolean(), z.number(), z.string(), z.null()])
    .optional()
    .transform((v) => (v === undefined || v === null || v === '' ? 1 : v === true || v === 1 || v === '1' ? 1 : 0)),
  allow_import: flag,
  autoname: optionalText,
  naming_rule: optionalText,
  title_field: optionalText,
  show_title_field_in_link: flag,
  search_fields: optionalText,
  sort_field: optionalText,
  sort_order: z
    .union([z.string(), z.null()])
    .optional()
    .transform((v, ctx) => {
      if (v === null || v === undefined || v === '') return undefined;
      const up = v.toUpperCase();
      if (up !== 'ASC' && up !== 'DESC') {
        ctx.addIssue({ code: 'custom', message: 'sort_order is ASC or DESC' });
        return z.NEVER;
      }
      return up;
    }),
  nsm_parent_field: optionalText,
  description: optionalText,
  document_type: optionalText,
  image_field: optionalText,
  max_attachments: optionalInt,
  fields: z.array(docFieldSchema).optional().default([]),
  permissions: z.array(docPermSchema).optional().default([]),
});

export type DocTypeInput = z.input<typeof docTypeSchema>;
export type DocTypeDefinition = z.output<typeof docTypeSchema>;

/** The DocType properties stored as columns of `tabDocType` (everything but the child tables). */
export const DOCTYPE_PROPERTIES = Object.keys(docTypeSchema.shape).filter((k) => k !== 'fields' && k !== 'permissions') as Array<
  Exclude<keyof DocTypeDefinition, 'fields' | 'permissions'>
>;
