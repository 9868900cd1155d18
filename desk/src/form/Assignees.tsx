import { useFrappePostCall } from 'frappe-react-sdk';
import { useId, useState } from 'react';
import { Button, Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { ErrorNotice } from '../shell/states';
import { text } from '../text';
import { parseDocinfo, useDocinfo } from './docinfo';
import { LinkInput } from './LinkInput';
import '../ui/confirm-dialog.css';
import './timeline.css';

interface Props {
  doctype: string;
  name: string;
  /** The user may change the document (Frappe asks for write on it to assign). */
  canAssign: boolean;
  notify: (message: string) => void;
}

/**
 * Who the document is assigned to (docinfo.assignments: open ToDos allocated for it), at the top of
 * the form: each with a button to remove them (frappe.desk.form.assign_to.remove), and "Assign to"
 * choosing a user with the Link search (frappe.desk.form.assign_to.add, assign_to a JSON list).
 */
export function Assignees({ doctype, name, canAssign, notify }: Props) {
  const { docinfo, refresh } = useDocinfo(doctype, name);
  const remove = useFrappePostCall('frappe.desk.form.assign_to.remove');
  const [choosing, setChoosing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const headingId = useId();
  const assignees = [...new Set((docinfo?.assignments ?? []).map((a) => a.owner))];
  const nameOf = (user: string) => docinfo?.fullNames[user] ?? user;

  const unassign = async (user: string) => {
    setError(null);
    try {
      await remove.call({ doctype, name, assign_to: user });
      await refresh();
      notify(text.timeline.unassigned(nameOf(user)));
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section className="assignees" aria-labelledby={headingId}>
      <h2 id={headingId} className="assignees-title">
        {text.timeline.assignedTo}
      </h2>
      {docinfo && assignees.length === 0 && <span className="state">{text.timeline.nobodyAssigned}</span>}
      <ul>
        {assignees.map((user) => (
          <li key={user} className="assignee">
            <span title={user}>{nameOf(user)}</span>
            {canAssign && (
              <button
                type="button"
                className="button button-quiet assignee-remove"
                aria-label={text.timeline.unassign(nameOf(user))}
                disabled={remove.loading}
                onClick={() => void unassign(user)}
              >
                <span aria-hidden="true">×</span>
              </button>
            )}
          </li>
        ))}
      </ul>
      {canAssign && (
        <button type="button" className="button" onClick={() => setChoosing(true)}>
          {text.timeline.assign}
        </button>
      )}
      {error !== null && <ErrorNotice error={error} title={text.timeline.assignFailed} />}
      {choosing && (
        <AssignDialog
          doctype={doctype}
          name={name}
          onClose={() => setChoosing(false)}
          onAssigned={async (user) => {
            setChoosing(false);
            const fresh = await refresh();
            notify(text.timeline.assigned(parseDocinfo(fresh?.docinfo).fullNames[user] ?? user));
          }}
        />
      )}
    </section>
  );
}

/** A dialog with a User Link search; no <form> (it is drawn from inside the document's form). */
function AssignDialog({
  doctype,
  name,
  onClose,
  onAssigned,
}: {
  doctype: string;
  name: string;
  onClose: () => void;
  onAssigned: (user: string) => Promise<void>;
}) {
  const add = useFrappePostCall('frappe.desk.form.assign_to.add');
  const [user, setUser] = useState('');
  const [error, setError] = useState<unknown>(null);
  const id = useId();
  const assign = async () => {
    const chosen = user.trim();
    if (chosen === '') {
      setError({ message: text.timeline.assignChoose });
      return;
    }
    setError(null);
    try {
      await add.call({ doctype, name, assign_to: JSON.stringify([chosen]) });
      await onAssigned(chosen);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <ModalOverlay className="modal-overlay" isOpen isDismissable={!add.loading} onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal modal-narrow">
        <Dialog className="dialog">
          <Heading slot="title">{text.timeline.assignTitle}</Heading>
          <LinkInput id={id} fieldname="assign_to" label={text.timeline.assignUser} required target="User" value={user} readOnly={false} onChange={setUser} />
          {error !== null && <ErrorNotice error={error} title={text.timeline.assignFailed} />}
          <div className="actions dialog-actions">
            <Button className="button" onPress={onClose} isDisabled={add.loading}>
              {text.timeline.close}
            </Button>
            <Button className="button button-primary" onPress={() => void assign()} isDisabled={add.loading}>
              {text.timeline.assignAdd}
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
