import { useState, type SyntheticEvent } from 'react';
import { hasColumn, labelOf } from '../meta/fieldtypes';
import type { DocField, DocTypeMeta } from '../meta/types';
import { text } from '../text';
import { ASSIGNED_TO, DOCSTATUS, FilterValue, OWNER } from './FilterValue';
import { needsValue, OPERATORS, type FilterRow, type Operator } from './query';

/** The fields a filter may name: every field with a value, the status of a submittable DocType, creator and assignees. */
export function filterFields(meta: DocTypeMeta): DocField[] {
  const fields = meta.fields.filter((f) => hasColumn(f) && f.hidden !== 1);
  return [...(meta.is_submittable === 1 ? [DOCSTATUS] : []), ...fields, OWNER, ASSIGNED_TO];
}

/** Filters as rows of field, condition and value; applied together (one request), not per keystroke. */
export function FilterBar({ meta, filters, onApply }: { meta: DocTypeMeta; filters: FilterRow[]; onApply: (rows: FilterRow[]) => void }) {
  const [rows, setRows] = useState<FilterRow[]>(filters);
  const fields = filterFields(meta);
  const fieldOf = (name: string) => fields.find((f) => f.fieldname === name);
  const update = (i: number, change: Partial<FilterRow>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...change } : r)));
  const submit = (e: SyntheticEvent) => {
    e.preventDefault();
    onApply(rows.filter((r) => !needsValue(r.operator) || r.value.trim() !== ''));
  };

  return (
    <form className="filters" onSubmit={submit} aria-label={text.list.filters}>
      {rows.map((row, i) => {
        const n = i + 1;
        return (
          <div className="filter-row" key={i}>
            <select aria-label={text.list.filterField(n)} value={row.field} onChange={(e) => update(i, { field: e.target.value, value: '' })}>
              <option value="name">{text.list.name}</option>
              {fields.map((f) => (
                <option key={f.fieldname} value={f.fieldname}>
                  {labelOf(f)}
                </option>
              ))}
            </select>
            <select aria-label={text.list.filterOperator(n)} value={row.operator} onChange={(e) => update(i, { operator: e.target.value as Operator })}>
              {OPERATORS.map((op) => (
                <option key={op} value={op}>
                  {text.operators[op] ?? op}
                </option>
              ))}
            </select>
            {needsValue(row.operator) && (
              <FilterValue
                id={`filter-value-${meta.name}-${i}`}
                label={text.list.filterValue(n)}
                field={fieldOf(row.field)}
                operator={row.operator}
                value={row.value}
                onChange={(value) => update(i, { value })}
              />
            )}
            <button
              type="button"
              className="button button-quiet"
              aria-label={text.list.removeFilter(n)}
              onClick={() => setRows(rows.filter((_, j) => j !== i))}
            >
              ×
            </button>
          </div>
        );
      })}
      <div className="filter-actions">
        <button type="button" className="button" onClick={() => setRows([...rows, { field: fields[0]?.fieldname ?? 'name', operator: '=', value: '' }])}>
          {text.list.addFilter}
        </button>
        <button type="submit" className="button">
          {text.list.applyFilters}
        </button>
        {filters.length > 0 && (
          <button
            type="button"
            className="button button-quiet"
            onClick={() => {
              setRows([]);
              onApply([]);
            }}
          >
            {text.list.clearFilters}
          </button>
        )}
      </div>
    </form>
  );
}
