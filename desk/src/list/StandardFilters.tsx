import { useEffect, useRef, useState } from 'react';
import { inputKindOf, labelOf } from '../meta/fieldtypes';
import type { DocField, DocTypeMeta } from '../meta/types';
import { text } from '../text';
import { DOCSTATUS, FilterValue } from './FilterValue';
import type { FilterRow, Operator } from './query';

/** Text-like values are typed: they apply once the typing pauses. */
const TYPING_MS = 500;

/** A quick filter's condition: text matches a part, everything else its exact value. */
function operatorOf(field: DocField): Operator {
  const kind = inputKindOf(field);
  return kind === 'text' || kind === 'textarea' || kind === 'email' || kind === 'tel' || kind === 'url' || kind === 'code' ? 'like' : '=';
}

/** The quick filters: the status of a submittable DocType, then its `in_standard_filter` fields. */
export function standardFilterFields(meta: DocTypeMeta): DocField[] {
  const fields = meta.fields.filter((f) => f.in_standard_filter === 1 && f.hidden !== 1 && inputKindOf(f) !== 'table' && inputKindOf(f) !== 'layout');
  return meta.is_submittable === 1 ? [DOCSTATUS, ...fields] : fields;
}

interface Props {
  meta: DocTypeMeta;
  filters: FilterRow[];
  onApply: (rows: FilterRow[]) => void;
}

/**
 * Frappe's standard filters above the list: one widget per field, applied as it changes (each is
 * one row of the list's filters: `field = value`, or `like` for text), alongside the filter rows.
 */
export function StandardFilters({ meta, filters, onApply }: Props) {
  const fields = standardFilterFields(meta);
  if (fields.length === 0) return null;
  const set = (field: DocField, value: string) => {
    const op = operatorOf(field);
    const others = filters.filter((r) => !(r.field === field.fieldname && r.operator === op));
    onApply(value === '' ? others : [...others, { field: field.fieldname, operator: op, value }]);
  };
  return (
    <div className="standard-filters" role="group" aria-label={text.listView.standardFilters}>
      {fields.map((f) => {
        const op = operatorOf(f);
        const current = filters.find((r) => r.field === f.fieldname && r.operator === op)?.value ?? '';
        return <QuickFilter key={f.fieldname} meta={meta} field={f} operator={op} value={current} onChange={(v) => set(f, v)} />;
      })}
    </div>
  );
}

function QuickFilter({
  meta,
  field,
  operator,
  value,
  onChange,
}: {
  meta: DocTypeMeta;
  field: DocField;
  operator: Operator;
  value: string;
  onChange: (v: string) => void;
}) {
  const typed = operator === 'like' || inputKindOf(field) === 'link';
  const [draft, setDraft] = useState(value);
  // The applied value changed elsewhere (cleared, back/forward): the widget follows it.
  useEffect(() => setDraft(value), [value]);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const change = (v: string) => {
    setDraft(v);
    clearTimeout(timer.current);
    if (!typed) onChange(v);
    else timer.current = setTimeout(() => v !== value && onChange(v), TYPING_MS);
  };
  const id = `quick-filter-${meta.name}-${field.fieldname}`.replace(/\s/g, '-');
  return (
    <div className="quick-filter">
      {/* Seen, not read: the widget is labelled with the same words (a Link's combobox has its own label). */}
      <span className="quick-filter-label" aria-hidden="true">
        {labelOf(field)}
      </span>
      <FilterValue id={id} label={labelOf(field)} field={field} operator={operator} value={draft} onChange={change} />
    </div>
  );
}
