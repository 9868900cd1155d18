import { labelOf } from '../meta/fieldtypes';
import type { DocField, DocTypeMeta } from '../meta/types';
import { text } from '../text';

/**
 * A Version's diff (Frappe's get_diff: changed, added, removed, row_changed) as sentences, with the
 * fields' labels from the meta. A field the meta leaves out (one above the reader's permlevel) is
 * left out here too.
 */

type Change = [string, unknown, unknown];

interface VersionData {
  changed: Change[];
  added: Array<[string, unknown]>;
  removed: Array<[string, unknown]>;
  row_changed: Array<[string, number, string, Change[]]>;
}

const arrays = <T>(value: unknown): T[] => (Array.isArray(value) ? (value.filter(Array.isArray) as T[]) : []);

export function parseVersionData(data: string): VersionData {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    parsed = {};
  }
  const d = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  return {
    changed: arrays<Change>(d.changed),
    added: arrays<[string, unknown]>(d.added),
    removed: arrays<[string, unknown]>(d.removed),
    row_changed: arrays<[string, number, string, Change[]]>(d.row_changed),
  };
}

/** A value as a sentence shows it: blank as "(empty)", lists and objects as JSON. */
export function shown(value: unknown): string {
  if (value === null || value === undefined || value === '') return text.timeline.blank;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function fieldOf(fields: DocField[], fieldname: string): DocField | undefined {
  return fields.find((f) => f.fieldname === fieldname);
}

/** One sentence per change in the Version, as `user` made them. */
export function versionLines(user: string, data: string, meta: DocTypeMeta, childMeta: (name: string) => DocTypeMeta | undefined): string[] {
  const diff = parseVersionData(data);
  const lines: string[] = [];
  for (const [fieldname, from, to] of diff.changed) {
    const field = fieldOf(meta.fields, fieldname);
    if (field) lines.push(text.timeline.changed(user, labelOf(field), shown(from), shown(to)));
  }
  const counted = (rows: Array<[string, unknown]>, say: (user: string, table: string, n: number) => string) => {
    const perTable = new Map<string, number>();
    for (const [table] of rows) perTable.set(table, (perTable.get(table) ?? 0) + 1);
    for (const [table, n] of perTable) {
      const field = fieldOf(meta.fields, table);
      if (field) lines.push(say(user, labelOf(field), n));
    }
  };
  counted(diff.added, text.timeline.rowsAdded);
  counted(diff.removed, text.timeline.rowsRemoved);
  for (const [table, idx, , changes] of diff.row_changed) {
    const field = fieldOf(meta.fields, table);
    if (!field) continue;
    const child = field.options ? childMeta(field.options) : undefined;
    const parts = (Array.isArray(changes) ? changes : []).flatMap(([fieldname, from, to]) => {
      const f = child ? fieldOf(child.fields, fieldname) : undefined;
      return f ? [text.timeline.change(labelOf(f), shown(from), shown(to))] : [];
    });
    if (parts.length > 0) lines.push(`${text.timeline.changedMany(user)} ${text.timeline.rowChanged(labelOf(field), idx + 1, parts.join('; '))}`);
  }
  return lines;
}
