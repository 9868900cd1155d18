import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import { labelOf } from '../meta/fieldtypes';
import { useLinkTitle } from '../meta/hooks';
import { formPath } from '../meta/slug';
import type { DocField, DocTypeMeta } from '../meta/types';
import { text } from '../text';
import { display, nameOf } from './columns';

export type Row = Record<string, unknown>;

interface Props {
  meta: DocTypeMeta;
  rows: Row[];
  columns: DocField[];
  titleField: DocField | undefined;
  sortField: string;
  sortOrder: 'asc' | 'desc';
  onSort: (field: string) => void;
  selected: ReadonlySet<string>;
  allMatching: boolean;
  onToggle: (name: string, range: boolean) => void;
  onTogglePage: () => void;
}

/** Server messages and Text Editor titles carry HTML; a list shows their text. */
function plain(value: string): string {
  return value.includes('<') ? new DOMParser().parseFromString(value, 'text/html').body.textContent : value;
}

/** The text a row is known by: its title when the DocType has one and it is set, else its name. */
export function titleOf(row: Row, titleField: DocField | undefined): string {
  const raw = titleField ? row[titleField.fieldname] : undefined;
  const title = typeof raw === 'string' ? plain(raw).trim() : typeof raw === 'number' ? String(raw) : '';
  return title === '' ? nameOf(row) : title;
}

/**
 * The records of a list page: a checkbox per row (Space toggles it, Shift+click selects a range),
 * the title (or name) linking to the form with the name beneath, the chosen columns (`bold`
 * fields in bold) and, on submittable DocTypes only, the status. Column headers sort.
 */
export function ListTable(props: Props) {
  const { meta, rows, columns, titleField, sortField, sortOrder, onSort, selected, allMatching, onToggle, onTogglePage } = props;
  const submittable = meta.is_submittable === 1;
  const names = rows.map(nameOf);
  const checkedCount = allMatching ? names.length : names.filter((n) => selected.has(n)).length;
  const pageBox = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (pageBox.current) pageBox.current.indeterminate = checkedCount > 0 && checkedCount < names.length;
  }, [checkedCount, names.length]);

  const header = (field: string, label: string) => {
    const active = sortField === field;
    return (
      <th scope="col" key={field} aria-sort={active ? (sortOrder === 'asc' ? 'ascending' : 'descending') : undefined}>
        <button type="button" className="sort-button" onClick={() => onSort(field)} title={text.listView.sortByColumn(label)}>
          {label}
          <span aria-hidden="true" className="sort-mark">
            {active ? (sortOrder === 'asc' ? ' ↑' : ' ↓') : ''}
          </span>
        </button>
      </th>
    );
  };

  return (
    <div className="table-scroll">
      <table className="list">
        <caption className="visually-hidden">{text.list.results(meta.name)}</caption>
        <thead>
          <tr>
            <th scope="col" className="select-cell">
              <input
                ref={pageBox}
                type="checkbox"
                aria-label={text.listView.selectPage}
                checked={names.length > 0 && checkedCount === names.length}
                onChange={onTogglePage}
              />
            </th>
            {header(titleField ? titleField.fieldname : 'name', titleField ? labelOf(titleField) : text.list.name)}
            {columns.map((c) => header(c.fieldname, labelOf(c)))}
            {submittable && header('docstatus', text.list.statusColumn)}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const name = nameOf(row);
            const title = titleOf(row, titleField);
            const checked = allMatching || selected.has(name);
            return (
              <tr key={name} data-name={name} className={checked ? 'selected' : undefined}>
                <td className="select-cell">
                  <input
                    type="checkbox"
                    aria-label={text.listView.selectRow(title === name ? name : `${title} (${name})`)}
                    checked={checked}
                    // React reports a checkbox's change from its click: Shift+click selects the range from the last row toggled; Space toggles this one.
                    onChange={(e) => onToggle(name, (e.nativeEvent as MouseEvent).shiftKey)}
                  />
                </td>
                <th scope="row" className="title-cell">
                  <Link to={formPath(meta.name, name)}>
                    <span className="row-title">{title}</span>
                    {title !== name && <span className="row-name">{name}</span>}
                  </Link>
                </th>
                {columns.map((c) => (
                  <td key={c.fieldname} data-fieldname={c.fieldname}>
                    {c.bold === 1 ? (
                      <strong>
                        <Cell field={c} value={row[c.fieldname]} />
                      </strong>
                    ) : (
                      <Cell field={c} value={row[c.fieldname]} />
                    )}
                  </td>
                ))}
                {submittable && (
                  <td>
                    <span className={`status status-${Number(row.docstatus)}`}>{text.list.status[Number(row.docstatus)]}</span>
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A cell's text; a Link to a DocType that shows titles in links shows the linked document's title. */
function Cell({ field, value }: { field: DocField; value: unknown }) {
  const title = useLinkTitle(field.fieldtype === 'Link' ? (field.options ?? undefined) : undefined, value);
  return <>{title ?? plainCell(field, value)}</>;
}

function plainCell(field: DocField, value: unknown): string {
  const shown = display(field, value);
  return field.fieldtype === 'Text Editor' || field.fieldtype === 'HTML Editor' ? plain(shown) : shown;
}
