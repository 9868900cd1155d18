import { useFrappeGetDocCount, useFrappeGetDocList } from 'frappe-react-sdk';
import { Link, useParams, useSearchParams } from 'react-router';
import { FormView } from '../form/FormView';
import { FilterBar } from '../list/FilterBar';
import { PAGE_SIZES, readListState, toApiFilter, writeListState, type ListState } from '../list/query';
import { hasColumn, inputKindOf, labelOf } from '../meta/fieldtypes';
import { useDoctypeOfSlug, useMeta } from '../meta/hooks';
import { formPath, newPath } from '../meta/slug';
import type { DocField, DocTypeMeta } from '../meta/types';
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

/** Columns: `in_list_view` fields, after the name (Frappe's list settings default). */
function listColumns(meta: DocTypeMeta): DocField[] {
  return meta.fields.filter((f) => f.in_list_view === 1 && hasColumn(f) && f.hidden !== 1);
}

function display(field: DocField | undefined, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (field && inputKindOf(field) === 'check') return value === 1 || value === true ? text.list.yes : text.list.no;
  if (typeof value === 'object') return JSON.stringify(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function ListView({ meta }: { meta: DocTypeMeta }) {
  const [params, setParams] = useSearchParams();
  const defaults = { sortField: meta.sort_field || 'creation', sortOrder: meta.sort_order?.toLowerCase() === 'asc' ? ('asc' as const) : ('desc' as const) };
  const state = readListState(params, defaults);
  const columns = listColumns(meta);
  const submittable = meta.is_submittable === 1;
  const filters = state.filters.map(toApiFilter);
  const list = useFrappeGetDocList<Record<string, unknown>>(meta.name, {
    fields: ['name', ...columns.map((c) => c.fieldname), ...(submittable ? ['docstatus'] : [])],
    filters,
    orderBy: { field: state.sortField, order: state.sortOrder },
    limit_start: (state.page - 1) * state.pageSize,
    limit: state.pageSize,
  });
  const count = useFrappeGetDocCount(meta.name, filters);
  const setState = (change: Partial<ListState>) => setParams(writeListState({ ...state, ...change }));

  const total = count.data ?? 0;
  const first = total === 0 ? 0 : (state.page - 1) * state.pageSize + 1;
  const last = Math.min(total, state.page * state.pageSize);
  const sortable = [
    { value: 'creation', label: 'Created On' },
    { value: 'modified', label: 'Last Updated On' },
    { value: 'name', label: text.list.name },
    ...meta.fields.filter(hasColumn).map((f) => ({ value: f.fieldname, label: labelOf(f) })),
  ];
  const captionId = `list-caption-${meta.name}`;

  return (
    <>
      <div className="page-head">
        <h1>{meta.name}</h1>
        {meta.__perm.rights.create && (
          <Link className="button button-primary" to={newPath(meta.name)}>
            {text.list.newDoc(meta.name)}
          </Link>
        )}
      </div>
      {/* A new key when the URL's filters change (back/forward), so the draft rows follow them. */}
      <FilterBar key={params.get('filters') ?? ''} meta={meta} filters={state.filters} onApply={(rows) => setState({ filters: rows, page: 1 })} />
      <div className="list-controls">
        <label>
          {text.list.sortBy}{' '}
          <select value={state.sortField} onChange={(e) => setState({ sortField: e.target.value, page: 1 })}>
            {sortable.map((s) => (
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
      </div>

      {list.error && <ErrorNotice error={list.error} />}
      {list.isLoading && <Loading />}
      {list.data && list.data.length === 0 && (
        <p className="state state-empty">{state.filters.length > 0 ? text.list.emptyFiltered : text.list.empty(meta.name)}</p>
      )}
      {list.data && list.data.length > 0 && (
        <div className="table-scroll">
          <table className="list">
            <caption id={captionId} className="visually-hidden">
              {text.list.results(meta.name)}
            </caption>
            <thead>
              <tr>
                <th scope="col">{text.list.name}</th>
                {columns.map((c) => (
                  <th scope="col" key={c.fieldname}>
                    {labelOf(c)}
                  </th>
                ))}
                {submittable && <th scope="col">{text.list.statusColumn}</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.map((row) => {
                const name = typeof row.name === 'string' ? row.name : JSON.stringify(row.name);
                return (
                  <tr key={name}>
                    <th scope="row">
                      <Link to={formPath(meta.name, name)}>{name}</Link>
                    </th>
                    {columns.map((c) => (
                      <td key={c.fieldname} data-fieldname={c.fieldname}>
                        {display(c, row[c.fieldname])}
                      </td>
                    ))}
                    {submittable && <td>{text.list.status[Number(row.docstatus)]}</td>}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
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
    </>
  );
}
