import { Button, Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { isLayout, isTable } from '../meta/fieldtypes';
import type { DocTypeMeta, DocValues } from '../meta/types';
import { text } from '../text';
import { FieldInput } from './FieldInput';
import { isEditable } from './values';
import '../ui/confirm-dialog.css';
import './row-dialog.css';

interface Props {
  id: string;
  /** The grid's label (the Table field's). */
  table: string;
  idx: number;
  childMeta: DocTypeMeta;
  row: DocValues;
  readOnly: boolean;
  docstatus: number;
  isNew: boolean;
  onChange: (fieldname: string, value: unknown) => void;
  onClose: () => void;
}

/**
 * Every field of one grid row, as Frappe's grid row form shows them: a grid has room for a few
 * columns only (a DocType's fields grid shows label, type, name, options and mandatory; "In List
 * View", "Bold", "Mandatory Depends On"… are edited here). Changes go to the row at once.
 */
export function RowDialog({ id, table, idx, childMeta, row, readOnly, docstatus, isNew, onChange, onClose }: Props) {
  const fields = childMeta.fields.filter((f) => !isLayout(f) && !isTable(f) && f.hidden !== 1);
  return (
    <ModalOverlay className="modal-overlay" isOpen isDismissable onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal">
        <Dialog className="dialog">
          <Heading slot="title">{text.gridRow.title(table, idx)}</Heading>
          <div className="row-form">
            {fields.map((f) => (
              <FieldInput
                key={f.fieldname}
                id={`${id}-row-${idx}-${f.fieldname}`}
                field={f}
                value={row[f.fieldname]}
                doc={row}
                readOnly={readOnly || !isEditable(childMeta, f, docstatus, isNew)}
                onChange={(v) => onChange(f.fieldname, v)}
              />
            ))}
          </div>
          <div className="actions dialog-actions">
            <Button className="button button-primary" onPress={onClose}>
              {text.gridRow.done}
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
