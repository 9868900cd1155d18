import type { ReactNode } from 'react';
import { Button, Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import './confirm-dialog.css';

interface Props {
  title: string;
  /** The question, naming what the action applies to. */
  children: ReactNode;
  confirmLabel: string;
  cancelLabel: string;
  /** A destructive action (delete, leave without saving): its button is drawn as a warning. */
  destructive?: boolean;
  /** The action is under way: both buttons wait. */
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * A question asked in the page, never with the browser's `confirm()`: a modal alert dialog (React
 * Aria: focus kept inside, Escape and a click outside cancel, the page behind inert). The cancel
 * button has the focus first, so Enter pressed by habit does not destroy anything.
 */
export function ConfirmDialog({ title, children, confirmLabel, cancelLabel, destructive = false, busy = false, onConfirm, onCancel }: Props) {
  return (
    <ModalOverlay className="modal-overlay" isOpen isDismissable={!busy} isKeyboardDismissDisabled={busy} onOpenChange={(open) => !open && onCancel()}>
      <Modal className="modal modal-narrow">
        <Dialog className="dialog" role="alertdialog">
          <Heading slot="title">{title}</Heading>
          {children}
          <div className="actions dialog-actions">
            <Button className="button" onPress={onCancel} isDisabled={busy} autoFocus>
              {cancelLabel}
            </Button>
            <Button className={destructive ? 'button button-danger' : 'button button-primary'} onPress={onConfirm} isDisabled={busy}>
              {confirmLabel}
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
