import { LinkInput } from '../form/LinkInput';
import { inputKindOf, selectOptions } from '../meta/fieldtypes';
import type { DocField } from '../meta/types';
import { text } from '../text';
import type { Operator } from './query';

/** The pseudo-field of a submittable DocType's status filter (Frappe's docstatus). */
export const DOCSTATUS: DocField = { fieldname: 'docstatus', fieldtype: 'Int', label: text.listView.status };
/** The standard columns a list filters on besides the fields: who made a record, whom it is assigned to. */
export const OWNER: DocField = { fieldname: 'owner', fieldtype: 'Link', options: 'User', label: text.listView.createdBy };
export const ASSIGNED_TO: DocField = { fieldname: '_assign', fieldtype: 'Data', label: text.listView.assignedTo };

interface Props {
  id: string;
  label: string;
  field: DocField | undefined;
  operator: Operator;
  value: string;
  onChange: (value: string) => void;
}

/**
 * The input a filter's value takes for its field (Frappe's filter widgets): a Select's options, a
 * Link searched as one types, a date picker, yes/no for a Check, Draft/Submitted/Cancelled for the
 * status; free text for the list operators (`in`, `like`), numbers for numbers.
 */
export function FilterValue({ id, label, field, operator, value, onChange }: Props) {
  const freeText = operator === 'in' || operator === 'not in' || operator.includes('like');
  if (field && !freeText) {
    if (field === DOCSTATUS || field.fieldname === 'docstatus') {
      return (
        <select id={id} aria-label={label} value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">{text.listView.any}</option>
          {[0, 1, 2].map((s) => (
            <option key={s} value={String(s)}>
              {text.list.status[s]}
            </option>
          ))}
        </select>
      );
    }
    const kind = inputKindOf(field);
    if (kind === 'select') {
      return (
        <select id={id} aria-label={label} value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">{text.listView.any}</option>
          {selectOptions(field).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
    }
    if (kind === 'check') {
      return (
        <select id={id} aria-label={label} value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">{text.listView.any}</option>
          <option value="1">{text.list.yes}</option>
          <option value="0">{text.list.no}</option>
        </select>
      );
    }
    if (kind === 'link') {
      return (
        <LinkInput
          compact
          id={id}
          fieldname={field.fieldname}
          label={label}
          required={false}
          target={field.options ?? undefined}
          value={value}
          readOnly={false}
          onChange={onChange}
        />
      );
    }
    if (kind === 'date' || kind === 'datetime') {
      return <input id={id} aria-label={label} type="date" value={value} onChange={(e) => onChange(e.target.value)} />;
    }
    if (kind === 'int' || kind === 'float' || kind === 'duration' || kind === 'rating') {
      return <input id={id} aria-label={label} type="number" step="any" value={value} onChange={(e) => onChange(e.target.value)} />;
    }
  }
  return (
    <input
      id={id}
      aria-label={label}
      type="text"
      value={value}
      title={operator === 'in' || operator === 'not in' ? text.list.inListHint : undefined}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}
