import { DoesNotExistError } from '@quire/errors';
import { ident, qualified } from '@quire/db';
import type { DocField, DocPerm, DocTypeDefinition } from './definition';
import { fieldTypeSpec, type ValueKind } from './fieldtypes';
import { checkOwnerFields } from './owner-fields';

/** Columns every table has (frappe.model.default_fields minus `doctype`). */
export const STANDARD_FIELDS = ['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus', 'idx'] as const;
/** Columns child tables add. */
export const CHILD_FIELDS = ['parent', 'parentfield', 'parenttype'] as const;
/** Columns parent tables add (Frappe creates them with the table). */
export const OPTIONAL_FIELDS = ['_user_tags', '_comments', '_assign', '_liked_by'] as const;

/** Names no DocField may take. */
export const RESERVED_FIELDNAMES = new Set<string>([...STANDARD_FIELDS, ...CHILD_FIELDS, ...OPTIONAL_FIELDS, 'doctype', '_seen']);

export interface ColumnInfo {
  name: string;
  kind: ValueKind;
  /** The DocField behind the column; undefined for standard columns. */
  field: DocField | undefined;
  /** Quoted column name, ready for SQL. */
  sql: string;
}

export type NamingRule = 'autoincrement' | 'hash' | 'uuid' | 'prompt' | 'field' | 'naming_series' | 'format' | 'expression' | 'single';

const STANDARD_KINDS: Record<string, ValueKind> = {
  name: 'text',
  owner: 'text',
  creation: 'datetime',
  modified: 'datetime',
  modified_by: 'text',
  docstatus: 'int',
  idx: 'int',
  parent: 'text',
  parentfield: 'text',
  parenttype: 'text',
  _user_tags: 'text',
  _comments: 'text',
  _assign: 'text',
  _liked_by: 'text',
};

/**
 * The compiled form of one DocType in one tenant: everything the hot path needs, computed once
 * per metadata load (column lookups, quoted identifiers, key order for serialisation).
 */
export class Meta {
  readonly name: string;
  readonly schema: string;
  readonly tableName: string;
  /** `"schema"."tabName"`. */
  readonly table: string;
  readonly fields: readonly DocField[];
  /** Fields that have a column, in definition order. */
  readonly dataFields: readonly DocField[];
  /** Table and Table MultiSelect fields. */
  readonly tableFields: readonly DocField[];
  readonly permissions: readonly DocPerm[];
  readonly istable: boolean;
  readonly issingle: boolean;
  /** A virtual DocType (Frappe's is_virtual): no table; its controller module's `virtual` reads its records from elsewhere. */
  readonly isVirtual: boolean;
  readonly isSubmittable: boolean;
  readonly isTree: boolean;
  readonly namingRule: NamingRule;
  /** The part after `field:`, `naming_series:` or `format:`; the expression for old-style autonames. */
  readonly namingArgument: string;
  readonly sortField: string;
  readonly sortOrder: 'ASC' | 'DESC';
  /**
   * Link-to-User fields whose user a row also belongs to for `if_owner` rights, beside `owner`
   * (an app's hooks `ownerFields`, see owner-fields.ts); only those this definition really has.
   */
  readonly ownerFields: readonly string[];
  /** Every column of the table in table order (standard first). */
  readonly columns: readonly ColumnInfo[];
  private readonly columnMap: ReadonlyMap<string, ColumnInfo>;
  private readonly fieldMap: ReadonlyMap<string, DocField>;

  constructor(
    readonly definition: DocTypeDefinition,
    schema: string,
    ownerFields: readonly string[] = [],
  ) {
    const d = derived(definition);
    this.name = definition.name;
    this.schema = schema;
    this.tableName = `tab${definition.name}`;
    this.table = qualified(schema, this.tableName);
    this.fields = definition.fields;
    this.fieldMap = d.fieldMap;
    this.dataFields = d.dataFields;
    this.tableFields = d.tableFields;
    this.permissions = definition.permissions;
    this.istable = definition.istable === 1;
    this.issingle = definition.issingle === 1;
    this.isVirtual = definition.is_virtual === 1;
    this.isSubmittable = definition.is_submittable === 1;
    this.isTree = definition.is_tree === 1;
    this.namingRule = d.namingRule;
    this.namingArgument = d.namingArgument;
    this.sortField = definition.sort_field ?? 'creation';
    this.sortOrder = definition.sort_order ?? 'DESC';
    // The apps' declaration was checked against their definitions at load; a tenant's stored one
    // that lacks a field (not migrated yet) simply does not widen ownership through it.
    this.ownerFields = ownerFields.length === 0 ? [] : checkOwnerFields(definition, ownerFields).valid;
    this.columns = d.columns;
    this.columnMap = d.columnMap;
  }

  field(fieldname: string): DocField | undefined {
    return this.fieldMap.get(fieldname);
  }

  column(name: string): ColumnInfo | undefined {
    return this.columnMap.get(name);
  }

  hasColumn(name: string): boolean {
    return this.columnMap.has(name);
  }

  get titleField(): string | undefined {
    return this.definition.title_field;
  }

  /** The child DocType of a Table field. */
  childDoctypeOf(fieldname: string): string | undefined {
    const f = this.fieldMap.get(fieldname);
    return f && fieldTypeSpec(f.fieldtype).kind === 'table' ? f.options : undefined;
  }

  /** Deterministic name of the unique index of a field (Postgres index names are per schema, 63 bytes). */
  uniqueIndexName(fieldname: string): string {
    return indexName('uq', this.tableName, fieldname);
  }

  searchIndexName(fieldname: string): string {
    return indexName('ix', this.tableName, fieldname);
  }

  /** The sequence that numbers an autoincrement DocType. */
  get sequence(): string {
    return qualified(this.schema, `${this.tableName}_id_seq`.slice(0, 63));
  }
}

/** What a Meta derives from its definition alone (no schema): shared by every tenant with the same definition. */
interface Derived {
  fieldMap: ReadonlyMap<string, DocField>;
  dataFields: readonly DocField[];
  tableFields: readonly DocField[];
  namingRule: NamingRule;
  namingArgument: string;
  columns: readonly ColumnInfo[];
  columnMap: ReadonlyMap<string, ColumnInfo>;
}

/** Definitions are never mutated once parsed (and identical ones are interned: registry.ts), so their derivations can be shared. */
const derivations = new WeakMap<DocTypeDefinition, Derived>();

function derived(def: DocTypeDefinition): Derived {
  let d = derivations.get(def);
  if (d) return d;
  const dataFields = def.fields.filter((f) => fieldTypeSpec(f.fieldtype).column !== undefined && !f.is_virtual);
  const [namingRule, namingArgument] = namingOf(def);
  const columns: ColumnInfo[] = [];
  const standard = [...STANDARD_FIELDS, ...(def.istable === 1 ? CHILD_FIELDS : OPTIONAL_FIELDS)];
  for (const name of standard) {
    const kind = name === 'name' && namingRule === 'autoincrement' ? 'int' : (STANDARD_KINDS[name] ?? 'text');
    columns.push({ name, kind, field: undefined, sql: ident(name) });
  }
  for (const f of dataFields) {
    columns.push({ name: f.fieldname, kind: fieldTypeSpec(f.fieldtype).kind, field: f, sql: ident(f.fieldname) });
  }
  d = {
    fieldMap: new Map(def.fields.map((f) => [f.fieldname, f])),
    dataFields,
    tableFields: def.fields.filter((f) => fieldTypeSpec(f.fieldtype).kind === 'table'),
    namingRule,
    namingArgument,
    columns,
    columnMap: new Map(columns.map((c) => [c.name, c])),
  };
  derivations.set(def, d);
  return d;
}

function indexName(prefix: string, table: string, field: string): string {
  const base = `${prefix}_${table}_${field}`.replace(/[^A-Za-z0-9_]/g, '_');
  if (base.length <= 63) return base;
  let h = 0;
  for (const ch of `${table}\0${field}`) h = (Math.imul(h, 31) + ch.charCodeAt(0)) | 0;
  return `${base.slice(0, 54)}_${(h >>> 0).toString(16).padStart(8, '0')}`;
}

function namingOf(def: DocTypeDefinition): [NamingRule, string] {
  if (def.issingle) return ['single', ''];
  const autoname = (def.autoname ?? '').trim();
  const lower = autoname.toLowerCase();
  if (lower === 'autoincrement') return ['autoincrement', ''];
  if (lower === 'uuid') return ['uuid', ''];
  if (lower === 'prompt') return ['prompt', ''];
  if (lower === 'hash' || lower === '') return ['hash', ''];
  if (lower.startsWith('field:')) return ['field', autoname.slice(6).trim()];
  if (lower.startsWith('naming_series:')) return ['naming_series', autoname.slice(14).trim()];
  if (lower.startsWith('format:')) return ['format', autoname.slice(7)];
  if (autoname.includes('#')) return ['expression', autoname];
  return ['hash', ''];
}

/** All DocTypes of one tenant, as loaded at one metadata version. */
export class TenantMeta {
  private readonly byName: ReadonlyMap<string, Meta>;

  constructor(
    readonly schema: string,
    metas: Iterable<Meta>,
  ) {
    this.byName = new Map([...metas].map((m) => [m.name, m]));
  }

  get(doctype: string): Meta | undefined {
    return this.byName.get(doctype);
  }

  /** The DocType, or Frappe's 404 "DocType X not found". */
  require(doctype: string): Meta {
    const meta = this.byName.get(doctype);
    if (!meta) throw new DoesNotExistError(`DocType ${doctype} not found`, { title: 'Not Found' });
    return meta;
  }

  all(): IterableIterator<Meta> {
    return this.byName.values();
  }

  /** DocTypes with a Table field whose options is `child`. */
  parentsOf(child: string): Meta[] {
    return [...this.byName.values()].filter((m) => m.tableFields.some((f) => f.options === child));
  }
}
