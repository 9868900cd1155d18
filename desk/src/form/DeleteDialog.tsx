import { useFrappeDeleteDoc } from 'frappe-react-sdk';
import { useState } from 'react';
import { ErrorNotice } from '../shell/states';
import { text } from '../text';
import { ConfirmDialog } from '../ui/ConfirmDialog';

interface Props {
  doctype: string;
  name: string;
  /** The document's title (its title_field), shown beside its name. */
  title: string;
  onDeleted: () => void;
  onClose: () => void;
}

/**
 * "Delete ToDo <title> (<name>)?" asked in the page; the delete goes through the SDK
 * (DELETE /api/resource/<doctype>/<name>). A refusal stays in the dialog in the server's words: a
 * document others link to (LinkExistsError), a submitted one (cancel it first), no permission.
 */
export function DeleteDialog({ doctype, name, title, onDeleted, onClose }: Props) {
  const { deleteDoc, loading } = useFrappeDeleteDoc();
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setError(null);
    try {
      await deleteDoc(doctype, name);
      onDeleted();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <ConfirmDialog
      title={text.formPage.deleteTitle(doctype)}
      confirmLabel={loading ? text.formPage.deleting : text.formPage.delete}
      cancelLabel={text.formPage.keep}
      destructive
      busy={loading}
      onConfirm={() => void confirm()}
      onCancel={onClose}
    >
      <p>{text.formPage.deleteQuestion(doctype, title, name)}</p>
      <p className="hint">{text.formPage.deleteWarning}</p>
      {error !== null && <ErrorNotice error={error} title={text.formPage.deleteFailed} />}
    </ConfirmDialog>
  );
}
