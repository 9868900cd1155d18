import { useState } from 'react';
import { hasColumn, labelOf } from '../meta/fieldtypes';
import type { DocField, DocTypeMeta, DocValues } from '../meta/types';
import { text } from '../text';
import { FieldInput } from './FieldInput';
import { RowDialog } from './RowDialog';
import { isEditable, newDocValues } from './values';

interface Props {
  id: string;
  field: DocField;
  childMeta: DocTypeMeta | undefined;
  rows: DocValues[];
  /** The parent's rights decide (child tables have none of their own). */
  readOnly: boolean;
  docstatus: number;
  isNew: boolean;
  onChange: (rows: DocValues[]) => void;
}

/** The columns of a grid: the child's `in_list_view` fields, else its first few with a value. */
function gridColumns(meta: DocTypeMeta): DocField[] {
  const shown = meta.fields.filter((f) => hasColumn(f) && f.hidden !== 1);
  const listed = shown.filter((f) => f.in_list_view === 1);
  return listed.length > 0 ? listed : shown.slice(0, 4);
}

/** A new row with its DocType's defaults (a permission row starts with Read checked, as the server would store it). */
function newRow(meta: DocTypeMeta): DocValues {
  const { docstatus: _docstatus, ...values } = newDocValues(meta);
  return values;
}

/** A Table field edited as a grid: one row per child document, rows added and removed in place. */
export function ChildTable({ id, field, childMeta, rows, readOnly, docstatus, isNew, onChange }: Props) {
  const label = labelOf(field);
  // The row whose every field is open in a dialog (a grid shows only a few).
  const [editing, setEditing] = useState<number | null>(null);
  if (!childMeta) return null;
  const columns = gridColumns(childMeta);
  const headerId = (c: DocField) => `${id}-col-${c.fieldname}`;
  const setCell = (i: number, fieldname: string, value: unknown) => onChange(rows.map((r, j) => (j === i ? { ...r, [fieldname]: value } : r)));

  return (
    <div className="field field-table" data-fieldname={field.fieldname}>
      <p className="table-label" id={`${id}-label`}>
        {label}
      </p>
      <div className="table-scroll">
        <table className="grid" aria-labelledby={`${id}-label`}>
          <thead>
            <tr>
              <th scope="col">{text.form.rowNumber}</th>
              {columns.map((c) => (
                <th scope="col" key={c.fieldname} id={headerId(c)}>
                  {labelOf(c)}
                  {c.reqd === 1 && <span aria-hidden="true"> *</span>}
                </th>
              ))}
              <th scope="col">
                <span className="visually-hidden">{text.form.rowActions}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 && (
              <tr>
                <td colSpan={columns.length + 2} className="state">
                  {text.form.noRows}
                </td>
              </tr>
            )}
            {rows.map((row, i) => (
              <tr key={typeof row.name === 'string' ? row.name : `new-${i}`} data-idx={i + 1}>
                <td>{i + 1}</td>
                {columns.map((c) => (
                  <td key={c.fieldname}>
                    <FieldInput
                      compact
                      ariaLabel={text.form.cellLabel(labelOf(c), i + 1)}
                      id={`${id}-${i}-${c.fieldname}`}
                      field={c}
                      value={row[c.fieldname]}
                      doc={row}
                      readOnly={readOnly || !isEditable(childMeta, c, docstatus, isNew)}
                      onChange={(v) => setCell(i, c.fieldname, v)}
                    />
                  </td>
                ))}
                <td className="row-actions">
                  <button type="button" className="button button-quiet" aria-label={text.gridRow.edit(i + 1, label)} onClick={() => setEditing(i)}>
                    <span aria-hidden="true">✎</span>
                  </button>
                  {!readOnly && (
                    <button
                      type="button"
                      className="button button-quiet"
                      aria-label={text.form.removeRow(i + 1)}
                      onClick={() => onChange(rows.filter((_, j) => j !== i))}
                    >
                      ×
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {editing !== null && rows[editing] && (
        <RowDialog
          id={id}
          table={label}
          idx={editing + 1}
          childMeta={childMeta}
          row={rows[editing]}
          readOnly={readOnly}
          docstatus={docstatus}
          isNew={isNew}
          onChange={(fieldname, value) => setCell(editing, fieldname, value)}
          onClose={() => setEditing(null)}
        />
      )}
      {!readOnly && (
        <button type="button" className="button" onClick={() => onChange([...rows, newRow(childMeta)])}>
          {text.form.addRow} <span className="visually-hidden">({label})</span>
        </button>
      )}
    </div>
  );
}
