import { useFrappeGetCall, type Filter } from 'frappe-react-sdk';
import { useId, useState } from 'react';
import { text } from '../text';
import type { FilterRow } from './query';

interface GroupCount {
  name: unknown;
  count: number;
  title?: unknown;
}

/** The SWR keys of a DocType's sidebar counts (the list asks them again when it refreshes). */
export function sidebarKeyPrefix(doctype: string): string {
  return `group-by:${doctype}:`;
}

interface Props {
  doctype: string;
  filters: Filter[];
  onFilter: (row: FilterRow) => void;
}

/**
 * The list sidebar (Frappe's group-by sidebar): how many matching records are assigned to each
 * user and were created by each (frappe.desk.listview.get_group_by_count with the list's
 * filters); choosing one filters the list by it. It can be hidden; on a narrow screen it sits
 * below the list.
 */
export function ListSidebar({ doctype, filters, onFilter }: Props) {
  const [shown, setShown] = useState(true);
  const id = useId();
  return (
    <aside className="list-sidebar" aria-label={text.listView.sidebar}>
      <button type="button" className="button button-quiet sidebar-toggle" aria-expanded={shown} aria-controls={id} onClick={() => setShown(!shown)}>
        {shown ? text.listView.hideSidebar : text.listView.showSidebar}
      </button>
      <div id={id} hidden={!shown}>
        {shown && (
          <>
            <GroupCounts
              doctype={doctype}
              filters={filters}
              field="assigned_to"
              title={text.listView.assignedTo}
              onPick={(user) => onFilter({ field: '_assign', operator: 'like', value: user })}
            />
            <GroupCounts
              doctype={doctype}
              filters={filters}
              field="owner"
              title={text.listView.createdBy}
              onPick={(user) => onFilter({ field: 'owner', operator: '=', value: user })}
            />
          </>
        )}
      </div>
    </aside>
  );
}

function GroupCounts({
  doctype,
  filters,
  field,
  title,
  onPick,
}: {
  doctype: string;
  filters: Filter[];
  field: string;
  title: string;
  onPick: (value: string) => void;
}) {
  const current = JSON.stringify(filters);
  const res = useFrappeGetCall<{ message: GroupCount[] }>(
    'frappe.desk.listview.get_group_by_count',
    { doctype, current_filters: current, field },
    `${sidebarKeyPrefix(doctype)}${field}:${current}`,
    { revalidateOnFocus: false, shouldRetryOnError: false, keepPreviousData: true },
  );
  const counts = res.data?.message ?? [];
  const headingId = useId();
  return (
    <section className="group-counts" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {res.data && counts.length === 0 && <p className="state">{text.listView.nobody}</p>}
      <ul>
        {counts.map((c) => {
          const value = String(c.name);
          const label = typeof c.title === 'string' && c.title !== '' ? c.title : value;
          return (
            <li key={value}>
              {/* Named by what it shows ("ada@example.com 3"), under its section's heading. */}
              <button type="button" className="group-count" title={text.listView.filterBy(title, label, c.count)} onClick={() => onPick(value)}>
                <span className="group-name">{label}</span> <span className="group-number">{c.count}</span>
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
