import type { DocField, Meta } from '@quire/meta';
import { permittedLevels, type Principal } from '@quire/permissions';

/**
 * Frappe's meta dict (`frappe.get_meta(doctype).as_dict()`: the DocType's definition and its
 * fields as DocField rows) as a caller may see it: fields above the caller's permlevels left out.
 * What /api/v2/doctype/<doctype>/meta and the desk's getdoctype answer.
 */
export function metaDict(meta: Meta, principal: Principal): Record<string, unknown> {
  const hidden = permittedLevels(meta, principal).hidden;
  const fields = meta.fields
    .filter((f) => !hidden.has(f.fieldname))
    .map((f: DocField, i) => ({ ...f, doctype: 'DocField', parent: meta.name, parenttype: 'DocType', parentfield: 'fields', idx: i + 1 }));
  return { ...meta.definition, doctype: 'DocType', fields };
}
