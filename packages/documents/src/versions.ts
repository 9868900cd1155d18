import type { Meta, TenantMeta } from '@quire/meta';
import type { DocContext, DocData, WriteFlags } from './context';
import { serializeDoc } from './serialize';

/**
 * Frappe's track_changes (frappe/model/document.py save_version, frappe/core/doctype/version
 * get_diff): a save of a DocType that tracks changes writes one `Version` holding what changed, in
 * the save's transaction and with the platform's rights (the saver need not be allowed to create
 * Versions). An insert writes none (Frappe writes one only for an import's updater reference).
 * Only fields with values are compared, so standard columns (modified, modified_by, …) never
 * count; values are kept as the API serves them, not formatted for display as Frappe's are.
 */

/** `[fieldname, old, new]`. */
export type FieldChange = [string, unknown, unknown];

export interface VersionDiff {
  changed: FieldChange[];
  /** `[table fieldname, row as_dict]`. */
  added: Array<[string, DocData]>;
  removed: Array<[string, DocData]>;
  /** `[table fieldname, index in the new rows, row name, changes]`. */
  row_changed: Array<[string, number, string, FieldChange[]]>;
  data_import: null;
  updater_reference: null;
}

export const VERSION_DOCTYPE = 'Version';

/** Empty, null and missing are one "no value" (a cleared field is saved as either). */
function sameValue(a: unknown, b: unknown): boolean {
  const blankA = a === undefined || a === null || a === '';
  const blankB = b === undefined || b === null || b === '';
  if (blankA || blankB) return blankA && blankB;
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}

function fieldChanges(meta: Meta, before: DocData, after: DocData): FieldChange[] {
  const out: FieldChange[] = [];
  for (const f of meta.dataFields) {
    const old = before[f.fieldname];
    const now = after[f.fieldname];
    if (!sameValue(old, now)) out.push([f.fieldname, old ?? null, now ?? null]);
  }
  return out;
}

const rowsOf = (doc: DocData, fieldname: string): DocData[] => (doc[fieldname] as DocData[] | undefined) ?? [];

/** What changed between two states of a document, or undefined when nothing did. */
export function versionDiff(tenant: TenantMeta, meta: Meta, before: DocData, after: DocData): VersionDiff | undefined {
  const diff: VersionDiff = { changed: fieldChanges(meta, before, after), added: [], removed: [], row_changed: [], data_import: null, updater_reference: null };
  for (const f of meta.tableFields) {
    const child = tenant.get(f.options ?? '');
    if (!child) continue;
    const asDict = (row: DocData): DocData => serializeDoc(tenant, child, row, { includeNulls: true });
    const oldRows = new Map(rowsOf(before, f.fieldname).map((r) => [String(r.name), r]));
    const kept = new Set<string>();
    rowsOf(after, f.fieldname).forEach((row, i) => {
      const name = String(row.name);
      const old = oldRows.get(name);
      if (!old) {
        diff.added.push([f.fieldname, asDict(row)]);
        return;
      }
      kept.add(name);
      const changes = fieldChanges(child, old, row);
      if (changes.length > 0) diff.row_changed.push([f.fieldname, i, name, changes]);
    });
    for (const [name, row] of oldRows) if (!kept.has(name)) diff.removed.push([f.fieldname, asDict(row)]);
  }
  if (!meta.istable && Number(before.docstatus ?? 0) !== Number(after.docstatus ?? 0)) {
    diff.changed.push(['docstatus', Number(before.docstatus ?? 0), Number(after.docstatus ?? 0)]);
  }
  const any = diff.changed.length + diff.added.length + diff.removed.length + diff.row_changed.length > 0;
  return any ? diff : undefined;
}

/** frappe.as_json(diff, separators=(",", ":")): compact, keys sorted at every depth. */
export function versionJson(diff: VersionDiff): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sorted(diff));
}

/** Whether a save of `meta` is one whose changes are kept as a Version. */
export function tracksChanges(ctx: DocContext, meta: Meta, flags: WriteFlags): boolean {
  return (
    meta.definition.track_changes === 1 && meta.name !== VERSION_DOCTYPE && !meta.istable && !flags.installing && ctx.meta.get(VERSION_DOCTYPE) !== undefined
  );
}
