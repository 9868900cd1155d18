import { useState, type SyntheticEvent } from 'react';
import { hasColumn, inputKindOf, labelOf } from '../meta/fieldtypes';
import type { DocField, DocTypeMeta } from '../meta/types';
import { text } from '../text';
import { needsValue, OPERATORS, type FilterRow, type Operator } from './query';

/** The input type that suits a filter value on this field. */
function valueType(field: DocField | undefined): string {
  const kind = field ? inputKindOf(field) : 'text';
  if (kind === 'int' || kind === 'float' || kind === 'check' || kind === 'rating' || kind === 'duration') return 'number';
  if (kind === 'date') return 'date';
  return 'text';
}

/** Filters as rows of field, condition and value; applied together (one request), not per keystroke. */
export function FilterBar({ meta, filters, onApply }: { meta: DocTypeMeta; filters: FilterRow[]; onApply: (rows: FilterRow[]) => void }) {
  const [rows, setRows] = useState<FilterRow[]>(filters);
  const fields = meta.fields.filter((f) => hasColumn(f) && f.hidden !== 1);
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
            <select aria-label={text.list.filterField(n)} value={row.field} onChange={(e) => update(i, { field: e.target.value })}>
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
              <input
                aria-label={text.list.filterValue(n)}
                type={row.operator === 'in' || row.operator === 'not in' || row.operator.includes('like') ? 'text' : valueType(fieldOf(row.field))}
                value={row.value}
                title={row.operator === 'in' || row.operator === 'not in' ? text.list.inListHint : undefined}
                onChange={(e) => update(i, { value: e.target.value })}
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
