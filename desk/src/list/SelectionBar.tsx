import type { Filter } from 'frappe-react-sdk';
import { useState } from 'react';
import { messagesOf } from '../form/errors';
import { useMeta } from '../meta/hooks';
import type { DocTypeMeta } from '../meta/types';
import { text } from '../text';
import { AssignDialog, BulkDeleteDialog, bulkEditableFields, EditDialog } from './BulkDialogs';
import { serverMessages, useFrappeClient, useSelectionNames } from './bulk';
import type { Selection } from './useSelection';

/** What the last action said, shown above the list until the next one. */
export interface Notice {
  tone: 'ok' | 'error';
  title: string;
  lines: string[];
}

type Open = { kind: 'edit' } | { kind: 'assign' } | { kind: 'delete'; names: string[] };

interface Props {
  meta: DocTypeMeta;
  selection: Selection;
  /** Records matching the filters. */
  total: number;
  /** The names shown on this page. */
  pageNames: string[];
  filters: Filter[];
  /** The columns shown, exported in this order. */
  fields: string[];
  onSelectAllMatching: () => void;
  onClear: () => void;
  /** After an action: the list is asked again; `keep`, when given, are the names left selected (else the selection stays). */
  onDone: (keep?: string[]) => void;
  onNotice: (notice: Notice) => void;
}

/** Frappe's answer to submit_cancel_or_update_docs and delete_items: the names that failed (nothing when it runs as a job). */
function failedNames(answer: { message?: unknown }): string[] | undefined {
  return Array.isArray(answer.message) ? answer.message.map(String) : undefined;
}

/** A text answer saved as a file, as a download link clicked in the page would. */
function saveFile(content: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([content], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * The bar over a list with a selection: how many are selected (or "all N matching"), and the
 * actions the user has the rights for: Edit (one field), Assign to, Export (CSV) and Delete. Each
 * is Frappe's method, called through the SDK, on the picked names or on every matching record.
 */
export function SelectionBar(props: Props) {
  const { meta, selection, total, pageNames, filters, fields, onSelectAllMatching, onClear, onDone, onNotice } = props;
  const { call } = useFrappeClient();
  const namesOf = useSelectionNames(meta.name, filters);
  const todo = useMeta('ToDo');
  const [open, setOpen] = useState<Open | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const rights = meta.__perm.rights;
  const canEdit = bulkEditableFields(meta).length > 0;
  const canAssign = todo.meta?.__perm.rights.create === true;
  const canExport = rights.export && rights.report;
  const canDelete = rights.delete;
  const count = selection.allMatching ? total : selection.names.length;
  const pageAll = pageNames.length > 0 && pageNames.every((n) => selection.names.includes(n));

  /** Runs an action with the bar busy; a refusal goes to the open dialog, or (with `failTitle`) to the page. */
  const run = async (action: () => Promise<void>, failTitle?: string) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      if (failTitle === undefined) setError(e);
      else onNotice({ tone: 'error', title: failTitle, lines: messagesOf(e) });
    } finally {
      setBusy(false);
    }
  };
  const close = () => {
    setOpen(null);
    setError(null);
  };

  const edit = (field: string, value: unknown) =>
    run(async () => {
      const names = await namesOf(selection);
      const answer = await call.post<{ message?: unknown }>('frappe.desk.doctype.bulk_update.bulk_update.submit_cancel_or_update_docs', {
        doctype: meta.name,
        docnames: JSON.stringify(names),
        action: 'update',
        data: JSON.stringify({ [field]: value }),
      });
      const failed = failedNames(answer);
      close();
      if (failed === undefined) onNotice({ tone: 'ok', title: text.listView.queued, lines: [] });
      else if (failed.length > 0) onNotice({ tone: 'error', title: text.listView.updateFailed, lines: [...serverMessages(answer), failed.join(', ')] });
      else onNotice({ tone: 'ok', title: text.listView.updated(names.length), lines: [] });
      onDone();
    });

  const assign = (user: string, description: string) =>
    run(async () => {
      const names = await namesOf(selection);
      await call.post('frappe.desk.form.assign_to.add_multiple', {
        doctype: meta.name,
        name: JSON.stringify(names),
        assign_to: JSON.stringify([user]),
        ...(description ? { description } : {}),
      });
      close();
      onNotice({ tone: 'ok', title: text.listView.assigned(names.length, user), lines: [] });
      onDone();
    });

  const exportCsv = () =>
    run(async () => {
      const csv = await call.post<unknown>('frappe.desk.reportview.export_query', {
        doctype: meta.name,
        title: meta.name,
        file_format_type: 'CSV',
        fields: JSON.stringify(fields),
        filters: JSON.stringify(filters),
        // "All matching" sends the filters alone (the server reads every matching record).
        ...(selection.allMatching ? {} : { selected_items: JSON.stringify(selection.names) }),
      });
      saveFile(typeof csv === 'string' ? csv : JSON.stringify(csv), `${meta.name}.csv`);
      onNotice({ tone: 'ok', title: text.listView.exported(count), lines: [] });
    }, text.listView.exportFailed);

  const askDelete = () =>
    run(async () => {
      setOpen({ kind: 'delete', names: await namesOf(selection) });
    }, text.errorTitle);

  const remove = (names: string[]) =>
    run(async () => {
      const answer = await call.post<{ message?: unknown }>('frappe.desk.reportview.delete_items', { doctype: meta.name, items: JSON.stringify(names) });
      const failed = failedNames(answer);
      close();
      if (failed === undefined) onNotice({ tone: 'ok', title: text.listView.deleteQueued(names.length), lines: [] });
      else if (failed.length > 0) {
        // The reasons (a link to the document, submitted), then Frappe's summary naming the ones left.
        onNotice({ tone: 'error', title: text.listView.deleteFailed(failed.length), lines: serverMessages(answer) });
      } else onNotice({ tone: 'ok', title: text.listView.deleted(names.length), lines: [] });
      onDone(failed ?? []);
    });

  if (count === 0) return null;
  return (
    <section className="selection-bar" aria-label={text.listView.selection}>
      <p className="selection-count" role="status">
        {selection.allMatching ? text.listView.allMatchingSelected(total) : text.listView.selected(count)}
      </p>
      {!selection.allMatching && pageAll && total > pageNames.length && (
        <button type="button" className="button button-quiet" onClick={onSelectAllMatching}>
          {text.listView.selectAllMatching(total)}
        </button>
      )}
      <div className="actions">
        {canEdit && (
          <button type="button" className="button" disabled={busy} onClick={() => setOpen({ kind: 'edit' })}>
            {text.listView.edit}
          </button>
        )}
        {canAssign && (
          <button type="button" className="button" disabled={busy} onClick={() => setOpen({ kind: 'assign' })}>
            {text.listView.assign}
          </button>
        )}
        {canExport && (
          <button type="button" className="button" disabled={busy} onClick={() => void exportCsv()}>
            {busy && open === null ? text.listView.exporting : text.listView.export}
          </button>
        )}
        {canDelete && (
          <button type="button" className="button button-danger-quiet" disabled={busy} onClick={() => void askDelete()}>
            {text.listView.delete}
          </button>
        )}
        <button type="button" className="button button-quiet" onClick={onClear}>
          {text.listView.clearSelection}
        </button>
      </div>
      {open?.kind === 'edit' && <EditDialog meta={meta} count={count} busy={busy} error={error} onClose={close} onApply={(f, v) => void edit(f, v)} />}
      {open?.kind === 'assign' && <AssignDialog count={count} busy={busy} error={error} onClose={close} onAssign={(u, d) => void assign(u, d)} />}
      {open?.kind === 'delete' && (
        <BulkDeleteDialog doctype={meta.name} names={open.names} busy={busy} error={error} onClose={close} onDelete={() => void remove(open.names)} />
      )}
    </section>
  );
}
