import { isLayout } from '../meta/fieldtypes';
import type { DocField } from '../meta/types';

/** A run of fields under one Section Break or Tab Break (Column Breaks only shape the columns). */
export interface Section {
  key: string;
  label: string | undefined;
  fields: DocField[];
}

/** The form's sections, in order; layout-only fields other than headings are dropped. */
export function sectionsOf(fields: DocField[]): Section[] {
  const sections: Section[] = [{ key: '_first', label: undefined, fields: [] }];
  for (const field of fields) {
    if (field.fieldtype === 'Section Break' || field.fieldtype === 'Tab Break') {
      sections.push({ key: field.fieldname, label: field.label ?? undefined, fields: [] });
      continue;
    }
    if (field.hidden === 1) continue;
    if (isLayout(field) && field.fieldtype !== 'Heading') continue;
    sections[sections.length - 1]?.fields.push(field);
  }
  return sections.filter((s) => s.fields.length > 0);
}
