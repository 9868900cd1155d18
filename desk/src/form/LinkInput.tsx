import { useFrappeGetCall, type SearchResult } from 'frappe-react-sdk';
import { useState } from 'react';
import { Button, ComboBox, Input, Label, ListBox, ListBoxItem, Popover, Text } from 'react-aria-components';
import { Link as RouterLink } from 'react-router';
import { useLinkTitle } from '../meta/hooks';
import { formPath } from '../meta/slug';
import { text } from '../text';
import { useDebounced } from '../ui/useDebounced';

interface Option extends SearchResult {
  id: string;
}

interface Props {
  id: string;
  fieldname: string;
  label: string;
  required: boolean;
  /** The DocType searched (a Dynamic Link's comes from another field). */
  target: string | undefined;
  value: string;
  readOnly: boolean;
  onChange: (value: string) => void;
  /** A grid cell: the label is for assistive technology only (the column header shows it). */
  compact?: boolean;
}

/**
 * A Link field: an accessible combobox (React Aria) whose suggestions come from
 * frappe.desk.search.search_link as the user types (the call the SDK's useSearch makes, asked
 * only while the field has focus). Free text stays
 * allowed, as in Frappe: the server says whether the document exists when saving.
 */
export function LinkInput({ id, fieldname, label, required, target, value, readOnly, onChange, compact = false }: Props) {
  const [focused, setFocused] = useState(false);
  const txt = useDebounced(value, 200);
  // Only searched while the field has focus: a form with many Link fields asks nothing on load.
  const active = focused && !readOnly && target !== undefined && target !== '';
  const search = useFrappeGetCall<{ message: SearchResult[] }>(
    'frappe.desk.search.search_link',
    { doctype: target, txt, page_length: 10 },
    active ? `search_link:${target}:${txt}` : null,
    // The previous suggestions stay while the next are fetched, so the list does not blink empty.
    { keepPreviousData: true },
  );
  const results = active ? (search.data?.message ?? []) : [];
  const title = useLinkTitle(target, focused ? undefined : value);

  return (
    <ComboBox
      className="field link-field"
      id={id}
      inputValue={value}
      onInputChange={onChange}
      onChange={(key) => key !== null && onChange(String(key))}
      onFocusChange={setFocused}
      allowsEmptyCollection
      allowsCustomValue
      menuTrigger="input"
      isReadOnly={readOnly}
      isRequired={required}
      validationBehavior="aria"
      items={results.map((r): Option => ({ ...r, id: r.value }))}
    >
      <Label className={compact ? 'visually-hidden' : undefined}>
        {label}
        {required && <RequiredMark />}
      </Label>
      <div className="combo">
        <Input data-fieldname={fieldname} />
        {!readOnly && (
          <Button className="button button-quiet combo-button" aria-label={label}>
            ▾
          </Button>
        )}
      </div>
      {value !== '' && target && !compact && (
        <RouterLink className="link-open" to={formPath(target, value)}>
          {text.form.openLink(target, title ?? value)}
        </RouterLink>
      )}
      <Popover className="popover" placement="bottom start">
        <ListBox<Option>
          className="listbox"
          renderEmptyState={() => <p className="listbox-empty">{search.isLoading ? text.form.searching : text.form.noMatches}</p>}
        >
          {(item) => (
            <ListBoxItem className="listbox-item" id={item.id} textValue={item.id}>
              <Text slot="label">{item.id}</Text>
              {(item.label || item.description) && (
                <Text slot="description" className="listbox-description">
                  {[item.label, item.description].filter(Boolean).join(' · ')}
                </Text>
              )}
            </ListBoxItem>
          )}
        </ListBox>
      </Popover>
    </ComboBox>
  );
}

export function RequiredMark() {
  return (
    <span className="required" title={text.form.required}>
      <span aria-hidden="true"> *</span>
      <span className="visually-hidden"> ({text.form.required})</span>
    </span>
  );
}
