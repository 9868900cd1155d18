import { useSWRConfig } from 'frappe-react-sdk';
import { Link } from 'react-router';
import { listPath, newPath } from '../../meta/slug';
import type { DocTypeMeta, DocValues } from '../../meta/types';
import { text } from '../../text';
import type { FormContext, FormExtension } from './types';

/** Frappe's fieldname from a label (DocType.scrub_field_names): lower case, words joined by `_`. */
export function fieldnameOf(label: string): string {
  return label
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

const LAYOUT = new Set(['Section Break', 'Column Break', 'Tab Break', 'Fold', 'Heading', 'HTML', 'Button']);

/** Rows whose fieldname is left empty take one from their label (layout rows from their type and place). */
function withFieldnames(body: DocValues): DocValues {
  if (!Array.isArray(body.fields)) return body;
  const fields = (body.fields as DocValues[]).map((row, i) => {
    if (typeof row.fieldname === 'string' && row.fieldname.trim() !== '') return row;
    const label = typeof row.label === 'string' ? row.label : '';
    const type = typeof row.fieldtype === 'string' ? row.fieldtype : '';
    const derived = label ? fieldnameOf(label) : LAYOUT.has(type) ? `${fieldnameOf(type)}_${i + 1}` : '';
    return derived ? { ...row, fieldname: derived } : row;
  });
  return { ...body, fields };
}

/** A saved DocType: links to its records (a child table has none of its own). */
function Records({ doc, name }: FormContext) {
  if (doc.istable === 1) return null;
  return (
    <>
      <Link className="button" to={listPath(name)}>
        {text.doctype.records(name)}
      </Link>
      {doc.issingle !== 1 && (
        <Link className="button" to={newPath(name)}>
          {text.list.newDoc(name)}
        </Link>
      )}
    </>
  );
}

/**
 * DocType: the builder is the DocType's own generated form (fields and permissions as grids), as
 * Frappe's is. A save changes what every page knows: the cached list of readable DocTypes and the
 * DocType's meta are asked for again, so the new list and form work at once.
 */
export const doctype: FormExtension = {
  Actions: Records,
  beforeSave: (body: DocValues, _meta: DocTypeMeta) => withFieldnames(body),
  useAfterSave: () => {
    const { mutate } = useSWRConfig();
    // Every meta: a child table's change also changes the forms of the DocTypes that hold it.
    return () => {
      void mutate((key) => typeof key === 'string' && (key.includes('get_readable_doctypes') || key.startsWith('meta:')));
    };
  },
};
