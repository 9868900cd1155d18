import { useFrappeGetDocCount, useFrappeGetDocList, useSWRConfig } from 'frappe-react-sdk';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { FormView } from '../form/FormView';
import { ColumnsMenu } from '../list/ColumnsMenu';
import { columnChoices, listColumns, nameOf, sortChoices, titleFieldOf } from '../list/columns';
import { FilterBar } from '../list/FilterBar';
import { ListSidebar, sidebarKeyPrefix } from '../list/ListSidebar';
import { useListSettings, type ListSettings } from '../list/ListSettings';
import { ListTable, type Row } from '../list/ListTable';
import { PAGE_SIZES, readListState, toApiFilter, writeListState, type ListState } from '../list/query';
import { SelectionBar, type Notice } from '../list/SelectionBar';
import { StandardFilters } from '../list/StandardFilters';
import { useLiveList } from '../list/useLiveList';
import { useSelection } from '../list/useSelection';
import '../list/list.css';
import { useDoctypeOfSlug, useMeta } from '../meta/hooks';
import { newPath } from '../meta/slug';
import type { DocTypeMeta } from '../meta/types';
import { ErrorNotice, Loading } from '../shell/states';
import { useTitle } from '../shell/useTitle';
import { text } from '../text';
import { NotFound } from './NotFound';

/** /app/<slug>: the list view, or the form of a Single DocType (which has no list). */
export function ListPage() {
  const slug = useParams().slug ?? '';
  const { doctype, error, known } = useDoctypeOfSlug(slug);
  const { meta, error: metaError } = useMeta(doctype?.name);
  useTitle(doctype?.name);
  if (error !== undefined) return <ErrorNotice error={error} />;
  if (known && !doctype) return <NotFound slug={slug} />;
  if (metaError !== undefined) return <ErrorNotice error={metaError} />;
  if (!meta) return <Loading />;
  if (meta.issingle === 1) return <FormView meta={meta} name={meta.name} />;
  return <ListView meta={meta} />;
}

/** The user's list settings first: the list opens with their columns, sort and page length. */
function ListView({ meta }: { meta: DocTypeMeta }) {
  const { loaded, settings, save } = useListSettings(meta.name);
  if (!loaded) return <Loading />;
  return <LoadedList meta={meta} settings={settings} save={save} />;
}

/** A header click: the same column flips its order; another sorts by it (dates newest first). */
function nextSort(state: ListState, field: string): Pick<ListState, 'sortField' | 'sortOrder'> {
  if (state.sortField === field) return { sortField: field, sortOrder: state.sortOrder === 'asc' ? 'desc' : 'asc' };
  return { sortField: field, sortOrder: field === 'creation' || field === 'modified' ? 'desc' : 'asc' };
}

function LoadedList({ meta, settings, save }: { meta: DocTypeMeta; settings: ListSettings; save: (change: ListSettings) => void }) {
  const [params, setParams] = useSearchParams();
  const state = readListState(params, {
    sortField: settings.sortField ?? (meta.sort_field || 'creation'),
    sortOrder: settings.sortOrder ?? (meta.sort_order?.toLowerCase() === 'asc' ? 'asc' : 'desc'),
    pageSize: settings.pageSize,
    filters: settings.filters,
  });
  const columns = listColumns(meta, settings.columns);
  const titleField = titleFieldOf(meta);
  const submittable = meta.is_submittable === 1;
  const filtersKey = JSON.stringify(state.filters);
  // One array per filter set, so hooks keyed on it do not run on every render.
  const filters = useMemo(() => (JSON.parse(filtersKey) as ListState['filters']).map(toApiFilter), [filtersKey]);
  const fields = ['name', ...(titleField ? [titleField.fieldname] : []), ...columns.map((c) => c.fieldname)];
  const list = useFrappeGetDocList<Row>(meta.name, {
    fields: [...fields, ...(submittable ? ['docstatus'] : [])],
    filters,
    orderBy: { field: state.sortField, order: state.sortOrder },
    limit_start: (state.page - 1) * state.pageSize,
    limit: state.pageSize,
  });
  const count = useFrappeGetDocCount(meta.name, filters);
  const { mutate } = useSWRConfig();
  const { selection, toggle, togglePage, selectAllMatching, clear, forget, set } = useSelection();
  const [notice, setNotice] = useState<Notice | null>(null);

  const setState = (change: Partial<ListState>) => {
    const next = { ...state, ...change };
    setParams(writeListState(next));
    // What the user chose (not the page they are on) is kept for their next visit.
    if (Object.keys(change).some((k) => k !== 'page'))
      save({ sortField: next.sortField, sortOrder: next.sortOrder, pageSize: next.pageSize, filters: next.filters });
  };

  // A new filter set is a new question: the selection made for the last one goes.
  const firstFilters = useRef(filtersKey);
  useEffect(() => {
    if (firstFilters.current === filtersKey) return;
    firstFilters.current = filtersKey;
    clear();
  }, [filtersKey, clear]);

  // Refreshes (realtime, after an action) revalidate in place; names that were on the page and are gone are unselected.
  const refreshing = useRef<string[] | null>(null);
  const pageNames = useMemo(() => (list.data ?? []).map(nameOf), [list.data]);
  useEffect(() => {
    const before = refreshing.current;
    if (before === null || list.isValidating) return;
    refreshing.current = null;
    forget(before.filter((n) => !pageNames.includes(n)));
  }, [pageNames, list.isValidating, forget]);
  const { mutate: mutateList } = list;
  const { mutate: mutateCount } = count;
  const refresh = useCallback(() => {
    refreshing.current = pageNames;
    void mutateList();
    void mutateCount();
    void mutate((key) => typeof key === 'string' && key.startsWith(sidebarKeyPrefix(meta.name)));
  }, [pageNames, mutateList, mutateCount, mutate, meta.name]);
  useLiveList(meta.name, refresh);

  const total = count.data ?? 0;
  const first = total === 0 ? 0 : (state.page - 1) * state.pageSize + 1;
  const last = Math.min(total, state.page * state.pageSize);
  const rights = meta.__perm.rights;

  return (
    <>
      <div className="page-head">
        <h1>{meta.name}</h1>
        {rights.create && (
          <Link className="button button-primary" to={newPath(meta.name)}>
            {text.list.newDoc(meta.name)}
          </Link>
        )}
      </div>
      <StandardFilters meta={meta} filters={state.filters} onApply={(rows) => setState({ filters: rows, page: 1 })} />
      {/* A new key when the URL's filters change (back/forward, a quick filter), so the draft rows follow them. */}
      <FilterBar key={filtersKey} meta={meta} filters={state.filters} onApply={(rows) => setState({ filters: rows, page: 1 })} />
      <div className="list-controls">
        <label>
          {text.list.sortBy}{' '}
          <select value={state.sortField} onChange={(e) => setState({ sortField: e.target.value, page: 1 })}>
            {sortChoices(meta).map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          {text.list.sortOrder}{' '}
          <select value={state.sortOrder} onChange={(e) => setState({ sortOrder: e.target.value === 'asc' ? 'asc' : 'desc', page: 1 })}>
            <option value="desc">{text.list.descending}</option>
            <option value="asc">{text.list.ascending}</option>
          </select>
        </label>
        <label>
          {text.list.pageSize}{' '}
          <select value={state.pageSize} onChange={(e) => setState({ pageSize: Number(e.target.value), page: 1 })}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <ColumnsMenu choices={columnChoices(meta)} shown={columns} onChange={(chosen) => save({ columns: chosen })} />
      </div>

      {notice && (
        <div className={`notice ${notice.tone === 'ok' ? 'notice-ok' : 'notice-error'}`} role={notice.tone === 'ok' ? 'status' : 'alert'}>
          <p className="notice-title">{notice.title}</p>
          {notice.lines.length > 0 && (
            <ul>
              {notice.lines.map((line, i) => (
                <li key={i}>{line}</li>
              ))}
            </ul>
          )}
          <button type="button" className="button button-quiet" onClick={() => setNotice(null)}>
            {text.listView.close}
          </button>
        </div>
      )}
      <SelectionBar
        meta={meta}
        selection={selection}
        total={total}
        pageNames={pageNames}
        filters={filters}
        fields={fields}
        onSelectAllMatching={selectAllMatching}
        onClear={clear}
        onNotice={setNotice}
        onDone={(keep) => {
          if (keep) set(keep);
          refresh();
        }}
      />
      <div className="list-layout">
        <div className="list-main">
          {list.error && <ErrorNotice error={list.error} />}
          {!list.data && list.isLoading && <Loading />}
          {list.data && list.data.length === 0 && (
            <p className="state state-empty">{state.filters.length > 0 ? text.list.emptyFiltered : text.list.empty(meta.name)}</p>
          )}
          {list.data && list.data.length > 0 && (
            <ListTable
              meta={meta}
              rows={list.data}
              columns={columns}
              titleField={titleField}
              sortField={state.sortField}
              sortOrder={state.sortOrder}
              onSort={(field) => setState({ ...nextSort(state, field), page: 1 })}
              selected={new Set(selection.names)}
              allMatching={selection.allMatching}
              onToggle={(name, range) => toggle(name, pageNames, range)}
              onTogglePage={() => togglePage(pageNames)}
            />
          )}
          <nav className="pager" aria-label={text.list.results(meta.name)}>
            <button type="button" className="button" disabled={state.page <= 1} onClick={() => setState({ page: state.page - 1 })}>
              {text.list.previous}
            </button>
            <span role="status" className="count">
              {count.data !== undefined ? text.list.count(first, last, total) : ''}
            </span>
            <button type="button" className="button" disabled={last >= total} onClick={() => setState({ page: state.page + 1 })}>
              {text.list.next}
            </button>
          </nav>
        </div>
        <ListSidebar
          doctype={meta.name}
          filters={filters}
          onFilter={(row) => setState({ filters: [...state.filters.filter((r) => r.field !== row.field), row], page: 1 })}
        />
      </div>
    </>
  );
}
