import type { ReactNode, SyntheticEvent } from 'react';
import { Button, Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { text } from '../text';

interface Props {
  title: string;
  submitLabel: string;
  busy: boolean;
  onSubmit: () => void;
  onClose: () => void;
  children: ReactNode;
}

/**
 * A small form in a modal dialog (React Aria: focus kept inside, Escape closes, the page behind
 * inert) for a bulk action that needs a choice first: which field and value, which user.
 */
export function ActionDialog({ title, submitLabel, busy, onSubmit, onClose, children }: Props) {
  const submit = (e: SyntheticEvent) => {
    e.preventDefault();
    if (!busy) onSubmit();
  };
  return (
    <ModalOverlay className="modal-overlay" isOpen isDismissable={!busy} isKeyboardDismissDisabled={busy} onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal modal-narrow">
        <Dialog className="dialog">
          <Heading slot="title">{title}</Heading>
          <form className="action-form" onSubmit={submit}>
            {children}
            <div className="actions dialog-actions">
              <Button className="button" onPress={onClose} isDisabled={busy}>
                {text.listView.cancel}
              </Button>
              <Button type="submit" className="button button-primary" isDisabled={busy}>
                {submitLabel}
              </Button>
            </div>
          </form>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
