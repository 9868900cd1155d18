import type { DocField, Meta } from '@quire/meta';
import type { TableScope } from './columns';
import { ownedBy } from './permission';
import { id, Sql, sql } from './sql';

/**
 * LEFT JOINs requested by `fields`: one per Table field (child rows of this document) and one per
 * Link field (the linked document), aliased c1, c2… and l1, l2… in order of first use.
 */

interface JoinEntry {
  readonly scope: TableScope;
  readonly via: DocField;
  readonly clause: Sql;
}

export class Joins {
  private readonly byField = new Map<string, JoinEntry>();
  private tables = 0;
  private links = 0;

  constructor(private readonly main: TableScope) {}

  /** `LEFT JOIN <child> cN ON cN.parent = m.name AND cN.parenttype = $ AND cN.parentfield = $`. */
  childTable(field: DocField, child: Meta, hidden: ReadonlySet<string>): TableScope {
    const existing = this.byField.get(field.fieldname);
    if (existing) return existing.scope;
    const alias = `c${++this.tables}`;
    const scope: TableScope = { alias, meta: child, hidden };
    const m = this.main.alias;
    const clause = sql` LEFT JOIN ${Sql.raw(child.table)} ${Sql.raw(alias)} ON ${Sql.raw(alias)}.${id('parent')} = ${Sql.raw(m)}.${id('name')} AND ${Sql.raw(alias)}.${id('parenttype')} = ${Sql.param(this.main.meta.name)} AND ${Sql.raw(alias)}.${id('parentfield')} = ${Sql.param(field.fieldname)}`;
    this.byField.set(field.fieldname, { scope, via: field, clause });
    return scope;
  }

  /** `LEFT JOIN <target> lN ON lN.name = m.<link>`; with `owner` only that user's documents (if_owner) join. */
  linked(field: DocField, target: Meta, hidden: ReadonlySet<string>, owner: string | undefined): TableScope {
    const existing = this.byField.get(field.fieldname);
    if (existing) return existing.scope;
    const alias = `l${++this.links}`;
    const scope: TableScope = { alias, meta: target, hidden };
    const a = Sql.raw(alias);
    const targetName = target.column('name')?.kind === 'int' ? sql`${a}.${id('name')}::text` : sql`${a}.${id('name')}`;
    const ownerClause = owner === undefined ? Sql.raw('') : sql` AND ${ownedBy(alias, target, owner)}`;
    const clause = sql` LEFT JOIN ${Sql.raw(target.table)} ${a} ON ${targetName} = ${Sql.raw(this.main.alias)}.${id(field.fieldname)}${ownerClause}`;
    this.byField.set(field.fieldname, { scope, via: field, clause });
    return scope;
  }

  /** The join made through a Table or Link field. */
  throughField(fieldname: string): TableScope | undefined {
    return this.byField.get(fieldname)?.scope;
  }

  /** The first child-table join of a child DocType. */
  ofChildDoctype(doctype: string): TableScope | undefined {
    for (const entry of this.byField.values()) {
      if (entry.via.fieldtype !== 'Link' && entry.scope.meta.name === doctype) return entry.scope;
    }
    return undefined;
  }

  render(): Sql {
    return Sql.join(
      [...this.byField.values()].map((e) => e.clause),
      '',
    );
  }
}
