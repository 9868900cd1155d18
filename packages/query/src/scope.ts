import type { DocField, Meta, TenantMeta } from '@quire/meta';
import { permittedLevels, type Principal } from '@quire/permissions';
import type { TableScope } from './columns';

/** What compiling needs to know about the statement's DocType and its neighbours. */
export class QueryScope {
  readonly main: TableScope;
  private readonly hiddenCache = new Map<Meta, ReadonlySet<string>>();

  constructor(
    readonly meta: Meta,
    readonly tenant: TenantMeta,
    readonly principal: Principal,
    readonly today: string,
  ) {
    this.main = { alias: 'm', meta, hidden: this.hiddenOf(meta) };
  }

  /** Fieldnames of `meta` the caller may not read. */
  hiddenOf(meta: Meta): ReadonlySet<string> {
    let hidden = this.hiddenCache.get(meta);
    if (!hidden) {
      hidden = permittedLevels(meta, this.principal).hidden;
      this.hiddenCache.set(meta, hidden);
    }
    return hidden;
  }

  /** A Table field of the DocType and its child DocType. */
  tableField(fieldname: string): { field: DocField; child: Meta } | undefined {
    const field = this.meta.tableFields.find((f) => f.fieldname === fieldname);
    const child = field?.options ? this.tenant.get(field.options) : undefined;
    return field && child ? { field, child } : undefined;
  }

  /** The first Table field whose child DocType is `doctype`. */
  tableFieldFor(doctype: string): { field: DocField; child: Meta } | undefined {
    const field = this.meta.tableFields.find((f) => f.options === doctype);
    return field ? this.tableField(field.fieldname) : undefined;
  }

  /** A Link field of the DocType and the DocType it links to. */
  linkField(fieldname: string): { field: DocField; target: Meta } | undefined {
    const field = this.meta.field(fieldname);
    if (!field || field.fieldtype !== 'Link' || !field.options || field.is_virtual) return undefined;
    const target = this.tenant.get(field.options);
    return target && !target.istable && !target.issingle ? { field, target } : undefined;
  }

  /** Scope of a child DocType used inside an EXISTS (alias `c`). */
  childScope(child: Meta, alias: string): TableScope {
    return { alias, meta: child, hidden: this.hiddenOf(child) };
  }
}
