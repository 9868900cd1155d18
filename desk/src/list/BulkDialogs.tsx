import { useState } from 'react';
import { FieldInput } from '../form/FieldInput';
import { LinkInput } from '../form/LinkInput';
import { inputKindOf, labelOf } from '../meta/fieldtypes';
import type { DocField, DocTypeMeta } from '../meta/types';
import { ErrorNotice } from '../shell/states';
import { text } from '../text';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ActionDialog } from './ActionDialog';

/**
 * Fields a bulk edit may set (Frappe's bulk edit): editable by the user (a permlevel they may
 * write), not read only, not a table, not layout, not hidden, not set once.
 */
export function bulkEditableFields(meta: DocTypeMeta): DocField[] {
  if (!meta.__perm.rights.write) return [];
  return meta.fields.filter((f) => {
    const kind = inputKindOf(f);
    if (kind === 'table' || kind === 'layout' || kind === 'readonly' || kind === 'attach') return false;
    if (f.read_only === 1 || f.hidden === 1) return false;
    return meta.__perm.write_levels.includes(f.permlevel ?? 0);
  });
}

interface DialogProps {
  count: number;
  busy: boolean;
  error: unknown;
  onClose: () => void;
}

/** Bulk edit: one field, one value, for every selected record. */
export function EditDialog({
  meta,
  count,
  busy,
  error,
  onClose,
  onApply,
}: DialogProps & { meta: DocTypeMeta; onApply: (field: string, value: unknown) => void }) {
  const fields = bulkEditableFields(meta);
  const [fieldname, setFieldname] = useState(fields[0]?.fieldname ?? '');
  const [value, setValue] = useState<unknown>(null);
  const field = fields.find((f) => f.fieldname === fieldname);
  return (
    <ActionDialog
      title={text.listView.editTitle(count)}
      submitLabel={busy ? text.listView.applying : text.listView.apply}
      busy={busy}
      onClose={onClose}
      onSubmit={() => field && onApply(field.fieldname, value)}
    >
      <div className="field">
        <label htmlFor="bulk-edit-field">{text.listView.editField}</label>
        <select
          id="bulk-edit-field"
          value={fieldname}
          onChange={(e) => {
            setFieldname(e.target.value);
            setValue(null);
          }}
        >
          {fields.map((f) => (
            <option key={f.fieldname} value={f.fieldname}>
              {labelOf(f)}
            </option>
          ))}
        </select>
      </div>
      {field && (
        <FieldInput
          key={field.fieldname}
          id="bulk-edit-value"
          field={{ ...field, label: `${text.listView.editValue}: ${labelOf(field)}`, reqd: 0, description: null }}
          value={value}
          doc={{}}
          readOnly={false}
          onChange={setValue}
        />
      )}
      {error !== null && <ErrorNotice error={error} title={text.listView.updateFailed} />}
    </ActionDialog>
  );
}

/** Assign to: a user (searched as one types), and an optional comment for the ToDo. */
export function AssignDialog({ count, busy, error, onClose, onAssign }: DialogProps & { onAssign: (user: string, description: string) => void }) {
  const [user, setUser] = useState('');
  const [comment, setComment] = useState('');
  const [missing, setMissing] = useState(false);
  return (
    <ActionDialog
      title={text.listView.assignTitle(count)}
      submitLabel={busy ? text.listView.assigning : text.listView.assign}
      busy={busy}
      onClose={onClose}
      onSubmit={() => {
        setMissing(user.trim() === '');
        if (user.trim() !== '') onAssign(user.trim(), comment.trim());
      }}
    >
      <LinkInput
        id="bulk-assign-user"
        fieldname="assign_to"
        label={text.listView.assignUser}
        required
        target="User"
        value={user}
        readOnly={false}
        onChange={setUser}
      />
      <div className="field">
        <label htmlFor="bulk-assign-comment">{text.listView.assignComment}</label>
        <textarea id="bulk-assign-comment" rows={2} value={comment} onChange={(e) => setComment(e.target.value)} />
      </div>
      {missing && (
        <p className="notice notice-error" role="alert">
          {text.listView.assignChoose}
        </p>
      )}
      {error !== null && <ErrorNotice error={error} title={text.listView.assignFailed} />}
    </ActionDialog>
  );
}

/** How many names a question lists before "and N more". */
const NAMES_SHOWN = 10;

/** Delete: asked in the page, naming how many and which. */
export function BulkDeleteDialog({
  doctype,
  names,
  busy,
  error,
  onClose,
  onDelete,
}: Omit<DialogProps, 'count'> & { doctype: string; names: string[]; onDelete: () => void }) {
  const shown = names.slice(0, NAMES_SHOWN).join(', ');
  return (
    <ConfirmDialog
      title={text.listView.deleteTitle(names.length, doctype)}
      confirmLabel={busy ? text.listView.deleting : text.listView.delete}
      cancelLabel={text.listView.cancel}
      destructive
      busy={busy}
      onConfirm={onDelete}
      onCancel={onClose}
    >
      <p>{text.listView.deleteNames(shown, names.length - NAMES_SHOWN)}</p>
      <p className="hint">{text.listView.deleteWarning}</p>
      {error !== null && <ErrorNotice error={error} title={text.listView.deleteFailed(names.length)} />}
    </ConfirmDialog>
  );
}
