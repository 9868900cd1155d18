import { useState } from 'react';
import { Button, Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { text } from '../text';

export interface SecretRow {
  label: string;
  value: string;
}

interface Props {
  title: string;
  /** Why the values are shown now and never again. */
  intro: string;
  rows: SecretRow[];
  onClose: () => void;
}

/**
 * Credentials shown once (an API secret, an OAuth client secret): a modal dialog (React Aria: focus
 * kept inside, Escape closes, the page behind inert) listing each value with a copy button.
 */
export function SecretDialog({ title, intro, rows, onClose }: Props) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async (row: SecretRow) => {
    try {
      await navigator.clipboard.writeText(row.value);
      setCopied(row.label);
    } catch {
      setCopied(null); // no clipboard access: the value stays selectable on screen
    }
  };
  return (
    <ModalOverlay className="modal-overlay" isOpen isDismissable onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal">
        <Dialog className="dialog" role="alertdialog">
          <Heading slot="title">{title}</Heading>
          <p>{intro}</p>
          <dl className="secrets">
            {rows.map((row) => (
              <div key={row.label} className="secret">
                <dt>{row.label}</dt>
                <dd>
                  <code data-secret={row.label}>{row.value}</code>
                  <Button className="button" onPress={() => void copy(row)}>
                    {text.secret.copy} <span className="visually-hidden">{row.label}</span>
                  </Button>
                </dd>
              </div>
            ))}
          </dl>
          <p aria-live="polite" className="live">
            {copied && text.secret.copied(copied)}
          </p>
          <div className="actions">
            <Button className="button button-primary" onPress={onClose} autoFocus>
              {text.secret.done}
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
