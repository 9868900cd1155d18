import { hasColumn, inputKindOf, labelOf } from '../meta/fieldtypes';
import type { DocField, DocTypeMeta } from '../meta/types';
import { text } from '../text';

/** The fields a list may show as columns: a value of their own, not hidden. */
export function columnChoices(meta: DocTypeMeta): DocField[] {
  return meta.fields.filter((f) => hasColumn(f) && f.hidden !== 1 && f.fieldname !== meta.title_field);
}

/** The title field, when the DocType names one that the user may read. */
export function titleFieldOf(meta: DocTypeMeta): DocField | undefined {
  return meta.title_field ? meta.fields.find((f) => f.fieldname === meta.title_field && hasColumn(f)) : undefined;
}

/**
 * The columns after the name (title) column: the user's choice when they made one, else the
 * DocType's `in_list_view` fields (Frappe's default). The title field is not repeated: the first
 * column shows it.
 */
export function listColumns(meta: DocTypeMeta, chosen: string[] | undefined): DocField[] {
  const choices = columnChoices(meta);
  if (chosen) return chosen.flatMap((name) => choices.filter((f) => f.fieldname === name));
  return choices.filter((f) => f.in_list_view === 1);
}

/** The sort options: the standard columns and every field with a value. */
export function sortChoices(meta: DocTypeMeta): Array<{ value: string; label: string }> {
  return [
    { value: 'creation', label: text.listView.createdOn },
    { value: 'modified', label: text.listView.modifiedOn },
    { value: 'name', label: text.list.name },
    ...meta.fields.filter(hasColumn).map((f) => ({ value: f.fieldname, label: labelOf(f) })),
  ];
}

/** A value as a list cell shows it. */
export function display(field: DocField | undefined, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (field && inputKindOf(field) === 'check') return value === 1 || value === true ? text.list.yes : text.list.no;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** A document's name as text (autoincrement names are numbers). */
export function nameOf(row: Record<string, unknown>): string {
  return typeof row.name === 'string' ? row.name : JSON.stringify(row.name);
}
