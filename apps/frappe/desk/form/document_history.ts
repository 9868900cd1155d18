import type { DocController, HookArgs } from '@quire/documents';
import { VERSION_DOCTYPE } from '@quire/documents';
import { COMMENT } from '../../core/doctype/comment/comment';
import { TODO } from '../doctype/todo/todo';

/**
 * Frappe's delete_dynamic_links for a document's history: when a document is deleted, its ToDos,
 * Comments and Versions go with it, in the same transaction (a later document of the same name
 * starts with no history, and nobody keeps an assignment to nothing). Plain deletes, as Frappe's.
 */

/** The history DocTypes and the columns naming the document they are about. */
const HISTORY: ReadonlyArray<{ doctype: string; typeColumn: string; nameColumn: string }> = [
  { doctype: TODO, typeColumn: 'reference_type', nameColumn: 'reference_name' },
  { doctype: VERSION_DOCTYPE, typeColumn: 'ref_doctype', nameColumn: 'docname' },
  { doctype: COMMENT, typeColumn: 'reference_doctype', nameColumn: 'reference_name' },
];

async function deleteHistory({ ctx, tx, meta, doc }: HookArgs): Promise<void> {
  if (meta.istable) return;
  for (const { doctype, typeColumn, nameColumn } of HISTORY) {
    const history = ctx.meta.get(doctype);
    const type = history?.column(typeColumn);
    const name = history?.column(nameColumn);
    if (!history || !type || !name) continue;
    await tx.query(`DELETE FROM ${history.table} WHERE ${type.sql} = $1 AND ${name.sql} = $2`, [meta.name, String(doc.name)]);
  }
}

export const documentHistory: DocController = { after_delete: deleteHistory };
