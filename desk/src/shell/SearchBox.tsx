import { useFrappeGetCall } from 'frappe-react-sdk';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Collection, ComboBox, Header, Input, Label, ListBox, ListBoxItem, ListBoxSection, Popover, type Key } from 'react-aria-components';
import { useNavigate } from 'react-router';
import { useReadableDoctypes } from '../meta/hooks';
import { formPath, listPath } from '../meta/slug';
import type { ReadableDoctype } from '../meta/types';
import { text } from '../text';
import { useDebounced } from '../ui/useDebounced';
import './search-box.css';

/** One row of frappe.utils.global_search.search. */
interface DocumentHit {
  doctype: string;
  name: string;
  title: string;
  content: string;
}

interface Option {
  id: string;
  label: string;
  description: string;
  path: string;
}

const DOCTYPES_SHOWN = 6;
const DOCUMENTS_SHOWN = 10;
const DEBOUNCE_MS = 200;

/** DocTypes whose name contains `txt` (case-insensitively), those starting with it first. */
function matchingDoctypes(doctypes: readonly ReadableDoctype[], txt: string): Option[] {
  const needle = txt.toLowerCase();
  return doctypes
    .filter((d) => d.name.toLowerCase().includes(needle))
    .sort((a, b) => Number(!a.name.toLowerCase().startsWith(needle)) - Number(!b.name.toLowerCase().startsWith(needle)) || a.name.localeCompare(b.name))
    .slice(0, DOCTYPES_SHOWN)
    .map((d, i) => ({ id: `doctype-${i}`, label: d.name, description: text.search.doctypeHint(d.module), path: listPath(d.name) }));
}

/** Options are keyed by position: a key ends up in element ids, which names (with spaces) would break. */
function documentOption(hit: DocumentHit, i: number): Option {
  return {
    id: `document-${i}`,
    label: hit.title || hit.name,
    description: hit.title && hit.title !== hit.name ? `${hit.doctype} · ${hit.name}` : hit.doctype,
    path: formPath(hit.doctype, hit.name),
  };
}

/** A text field, where `/` is typed rather than a shortcut. */
function typingIn(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/**
 * The desk's search box (Frappe's awesome bar): an accessible combobox in the bar, focused with
 * Ctrl+K (Cmd+K) or `/`. It offers the DocTypes the user may read whose name matches, and the
 * documents frappe.utils.global_search.search finds (asked once typing pauses), in two groups;
 * arrow keys move, Enter opens the DocType's list or the document's form, Escape closes.
 */
export function SearchBox() {
  const navigate = useNavigate();
  const input = useRef<HTMLInputElement>(null);
  const fieldBox = useRef<HTMLDivElement>(null);
  const [value, setValue] = useState('');
  const txt = useDebounced(value.trim(), DEBOUNCE_MS);
  const { doctypes } = useReadableDoctypes();
  const search = useFrappeGetCall<{ message: DocumentHit[] }>(
    'frappe.utils.global_search.search',
    { text: txt, limit: DOCUMENTS_SHOWN },
    txt === '' ? null : `global_search:${txt}`,
    { keepPreviousData: true, revalidateOnFocus: false },
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const shortcut = (e.key === 'k' || e.key === 'K') && (e.ctrlKey || e.metaKey) && !e.altKey;
      if (!shortcut && !(e.key === '/' && !e.ctrlKey && !e.metaKey && !e.altKey && !typingIn(e.target))) return;
      e.preventDefault();
      input.current?.focus();
      input.current?.select();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const doctypeOptions = useMemo(() => (txt === '' ? [] : matchingDoctypes(doctypes ?? [], txt)), [doctypes, txt]);
  const documentOptions = useMemo(() => (txt === '' ? [] : (search.data?.message ?? []).map(documentOption)), [search.data, txt]);
  const byId = useMemo(() => new Map([...doctypeOptions, ...documentOptions].map((o) => [o.id, o])), [doctypeOptions, documentOptions]);
  const waiting = value.trim() !== txt || search.isLoading || search.isValidating;

  const open = (key: Key | null) => {
    const option = key === null ? undefined : byId.get(String(key));
    if (!option) return;
    setValue('');
    input.current?.blur();
    void navigate(option.path);
  };

  return (
    <ComboBox
      className="search-box"
      aria-label={text.search.label}
      inputValue={value}
      onInputChange={setValue}
      onChange={open}
      value={null}
      // The server and the DocType list already matched: nothing is filtered out again here.
      defaultFilter={() => true}
      allowsEmptyCollection
      allowsCustomValue
      menuTrigger="input"
    >
      <Label className="visually-hidden">{text.search.label}</Label>
      <div className="search-box-field" ref={fieldBox}>
        <svg aria-hidden="true" className="search-box-icon" viewBox="0 0 16 16" width="16" height="16">
          <circle cx="7" cy="7" r="4.5" fill="none" stroke="currentColor" strokeWidth="1.6" />
          <path d="M10.5 10.5 14 14" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
        </svg>
        <Input ref={input} className="search-box-input" placeholder={text.search.placeholder} />
        <kbd aria-hidden="true" className="search-box-kbd">
          {/Mac|iP(hone|ad)/.test(navigator.platform) ? text.search.shortcutMac : text.search.shortcut}
        </kbd>
      </div>
      <Popover className="popover search-box-popover" placement="bottom start" triggerRef={fieldBox}>
        <ListBox
          className="listbox"
          renderEmptyState={() => <p className="listbox-empty">{waiting ? text.search.searching : text.search.noMatches(value.trim())}</p>}
        >
          {doctypeOptions.length > 0 && (
            <ListBoxSection className="search-box-section">
              <Header className="search-box-header">{text.search.doctypes}</Header>
              <Collection items={doctypeOptions}>{(o) => <SearchOption option={o} />}</Collection>
            </ListBoxSection>
          )}
          {documentOptions.length > 0 && (
            <ListBoxSection className="search-box-section">
              <Header className="search-box-header">{text.search.documents}</Header>
              <Collection items={documentOptions}>{(o) => <SearchOption option={o} />}</Collection>
            </ListBoxSection>
          )}
        </ListBox>
      </Popover>
    </ComboBox>
  );
}

function SearchOption({ option }: { option: Option }) {
  // Plain text, not label and description slots: the option is named by all it shows (title and
  // where it is), so what a screen reader says matches what is seen.
  return (
    <ListBoxItem className="listbox-item" id={option.id} textValue={option.label}>
      <span>{option.label}</span>
      <span className="listbox-description">{option.description}</span>
    </ListBoxItem>
  );
}
