import type { DocData, FieldChange, VersionDiff } from '@quire/documents';
import type { Meta, TenantMeta } from '@quire/meta';
import { permittedLevels, type Principal } from '@quire/permissions';

/**
 * Version (frappe/core/doctype/version): what one save of a tracked document changed. The platform
 * writes them (packages/documents/src/versions.ts); this module shows them to a reader. A Version
 * holds every changed value, so a reader is shown only the fields they may read (permlevel): the
 * others are cut from the diff, and a Version left with nothing is not shown at all.
 */

/** Fields of `meta`, and of its child tables, at permlevels the reader may not read (a child's fields follow the parent's levels). */
function hiddenFields(tenant: TenantMeta, meta: Meta, principal: Principal): { own: ReadonlySet<string>; child: (table: string) => ReadonlySet<string> } {
  const levels = permittedLevels(meta, principal);
  const byTable = new Map<string, ReadonlySet<string>>();
  return {
    own: levels.hidden,
    child(table) {
      let hidden = byTable.get(table);
      if (!hidden) {
        const childMeta = tenant.get(meta.childDoctypeOf(table) ?? '');
        hidden = new Set((childMeta?.fields ?? []).filter((f) => !levels.read.has(f.permlevel ?? 0)).map((f) => f.fieldname));
        byTable.set(table, hidden);
      }
      return hidden;
    },
  };
}

const visibleChanges = (changes: FieldChange[], hidden: ReadonlySet<string>): FieldChange[] => changes.filter(([field]) => !hidden.has(field));

function withoutFields(row: DocData, hidden: ReadonlySet<string>): DocData {
  if (hidden.size === 0) return row;
  return Object.fromEntries(Object.entries(row).filter(([key]) => !hidden.has(key)));
}

/** A Version's `data` as this reader may see it, or undefined when nothing in it is theirs to see. */
export function readableVersionData(tenant: TenantMeta, meta: Meta, principal: Principal, data: string): string | undefined {
  let diff: Partial<VersionDiff>;
  try {
    diff = JSON.parse(data) as Partial<VersionDiff>;
  } catch {
    return undefined;
  }
  const hidden = hiddenFields(tenant, meta, principal);
  if (hidden.own.size === 0 && !meta.tableFields.some((f) => hidden.child(f.fieldname).size > 0)) return data;
  const rows = (list: Array<[string, DocData]> | undefined): Array<[string, DocData]> =>
    (list ?? []).filter(([table]) => !hidden.own.has(table)).map(([table, row]) => [table, withoutFields(row, hidden.child(table))]);
  const shown: Partial<VersionDiff> = {
    ...diff,
    changed: visibleChanges(diff.changed ?? [], hidden.own),
    added: rows(diff.added),
    removed: rows(diff.removed),
    row_changed: (diff.row_changed ?? [])
      .filter(([table]) => !hidden.own.has(table))
      .map(([table, index, name, changes]): [string, number, string, FieldChange[]] => [table, index, name, visibleChanges(changes, hidden.child(table))])
      .filter(([, , , changes]) => changes.length > 0),
  };
  const empty = [shown.changed, shown.added, shown.removed, shown.row_changed].every((list) => (list ?? []).length === 0);
  return empty ? undefined : JSON.stringify(shown);
}
