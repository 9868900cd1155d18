import { useFrappeFileUpload } from 'frappe-react-sdk';
import { useState, type ReactNode } from 'react';
import { inputKindOf, labelOf, selectOptions } from '../meta/fieldtypes';
import type { DocField, DocValues } from '../meta/types';
import { text } from '../text';
import { LinkInput, RequiredMark } from './LinkInput';
import { asText, fromDatetimeInput, fromNumberInput, toDatetimeInput, toTimeInput } from './values';

export interface FieldInputProps {
  field: DocField;
  value: unknown;
  /** The whole document (a Dynamic Link reads its DocType from another field). */
  doc: DocValues;
  readOnly: boolean;
  onChange: (value: unknown) => void;
  /** Unique per form (and per row in a grid). */
  id: string;
  /** A grid cell: labelled by its column header instead of a visible label of its own. */
  compact?: boolean;
  ariaLabel?: string;
}

/** One field of a form: a label and the input that suits its fieldtype, carrying `data-fieldname`. */
export function FieldInput(props: FieldInputProps) {
  const { field, value, doc, readOnly, onChange, id, compact = false, ariaLabel } = props;
  const kind = inputKindOf(field);
  const label = labelOf(field);
  const required = field.reqd === 1;

  if (kind === 'link' || kind === 'dynamic-link') {
    const target = kind === 'link' ? (field.options ?? undefined) : asText(doc[field.options ?? '']) || undefined;
    return (
      <LinkInput
        id={id}
        fieldname={field.fieldname}
        label={compact ? (ariaLabel ?? label) : label}
        required={required}
        target={target}
        value={asText(value)}
        readOnly={readOnly}
        onChange={onChange}
        compact={compact}
      />
    );
  }

  const common = {
    id,
    'data-fieldname': field.fieldname,
    'aria-required': required || undefined,
    'aria-label': compact ? ariaLabel : undefined,
    'aria-describedby': field.description && !compact ? `${id}-description` : undefined,
  };
  let input: ReactNode;
  switch (kind) {
    case 'check':
      input = <input {...common} type="checkbox" checked={Boolean(value)} disabled={readOnly} onChange={(e) => onChange(e.target.checked ? 1 : 0)} />;
      break;
    case 'select':
      input = (
        <select {...common} value={asText(value)} disabled={readOnly} onChange={(e) => onChange(e.target.value)}>
          <option value="" />
          {selectOptions(field).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
      break;
    case 'int':
    case 'float':
    case 'duration':
    case 'rating': {
      const integer = kind === 'int';
      input = (
        <input
          {...common}
          type="number"
          inputMode={integer ? 'numeric' : 'decimal'}
          step={integer ? 1 : 'any'}
          min={kind === 'rating' ? 0 : undefined}
          value={value === null || value === undefined ? '' : asText(value)}
          readOnly={readOnly}
          onChange={(e) => onChange(fromNumberInput(e.target.value, integer))}
        />
      );
      break;
    }
    case 'date':
      input = <input {...common} type="date" value={asText(value).slice(0, 10)} readOnly={readOnly} onChange={(e) => onChange(e.target.value || null)} />;
      break;
    case 'datetime':
      input = (
        <input
          {...common}
          type="datetime-local"
          step={1}
          value={toDatetimeInput(value)}
          readOnly={readOnly}
          onChange={(e) => onChange(fromDatetimeInput(e.target.value))}
        />
      );
      break;
    case 'time':
      input = <input {...common} type="time" step={1} value={toTimeInput(value)} readOnly={readOnly} onChange={(e) => onChange(e.target.value || null)} />;
      break;
    case 'textarea':
    case 'code':
    case 'json':
      input = (
        <textarea
          {...common}
          className={kind === 'textarea' ? undefined : 'code'}
          spellCheck={kind === 'textarea'}
          rows={compact ? 1 : kind === 'textarea' ? 4 : 8}
          value={asText(value)}
          readOnly={readOnly}
          onChange={(e) => onChange(e.target.value)}
        />
      );
      break;
    case 'attach':
      input = <AttachInput common={common} label={label} value={asText(value)} readOnly={readOnly} onChange={onChange} />;
      break;
    case 'autocomplete':
      input = (
        <>
          <input {...common} type="text" list={`${id}-options`} value={asText(value)} readOnly={readOnly} onChange={(e) => onChange(e.target.value)} />
          <datalist id={`${id}-options`}>
            {selectOptions(field).map((o) => (
              <option key={o} value={o} />
            ))}
          </datalist>
        </>
      );
      break;
    case 'color':
      input = (
        <span className="color-input">
          <input
            {...common}
            type="text"
            pattern="#[0-9a-fA-F]{6}"
            placeholder="#rrggbb"
            value={asText(value)}
            readOnly={readOnly}
            onChange={(e) => onChange(e.target.value)}
          />
          <span className="swatch" aria-hidden="true" style={{ background: asText(value) || 'transparent' }} />
        </span>
      );
      break;
    default: {
      const type = kind === 'email' || kind === 'url' || kind === 'tel' || kind === 'password' ? kind : 'text';
      input = (
        <input
          {...common}
          type={type}
          autoComplete={kind === 'password' ? 'new-password' : undefined}
          value={asText(value)}
          readOnly={readOnly || kind === 'readonly'}
          maxLength={field.length ?? undefined}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    }
  }

  if (compact) return input;
  return (
    <div className={`field field-${kind}`}>
      <label htmlFor={id}>
        {label}
        {required && <RequiredMark />}
      </label>
      {input}
      {kind === 'duration' && <span className="hint">{text.form.seconds}</span>}
      {field.description && (
        <p className="hint" id={`${id}-description`}>
          {field.description}
        </p>
      )}
    </div>
  );
}

/** Attach: the file's URL, or a file uploaded through the SDK (upload_file) whose URL it becomes. */
function AttachInput({
  common,
  label,
  value,
  readOnly,
  onChange,
}: {
  common: Record<string, unknown>;
  label: string;
  value: string;
  readOnly: boolean;
  onChange: (value: unknown) => void;
}) {
  const { upload, loading } = useFrappeFileUpload();
  const [error, setError] = useState<string | null>(null);
  const onFile = async (file: File | undefined) => {
    if (!file) return;
    setError(null);
    try {
      const uploaded = await upload(file, { isPrivate: false });
      if (uploaded.file_url) onChange(uploaded.file_url);
    } catch (err) {
      setError((err as { message?: string }).message ?? String(err));
    }
  };
  return (
    <span className="attach-input">
      <input {...common} type="text" value={value} readOnly={readOnly} onChange={(e) => onChange(e.target.value)} />
      {!readOnly && <input type="file" aria-label={text.form.upload(label)} onChange={(e) => void onFile(e.target.files?.[0])} />}
      {loading && <span role="status">{text.form.uploading}</span>}
      {error && <span role="alert">{error}</span>}
    </span>
  );
}
