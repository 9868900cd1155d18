import { useFrappeFileUpload } from 'frappe-react-sdk';
import { useId, useState } from 'react';
import { ErrorNotice } from '../shell/states';
import { text } from '../text';
import type { AttachmentEntry } from './docinfo';

interface Props {
  doctype: string;
  name: string;
  attachments: AttachmentEntry[] | undefined;
  canAttach: boolean;
  onChange: () => void;
}

/** A file's link only when its URL is the site's own (`/files/…`, `/private/files/…`) or http(s). */
const safeUrl = (url: string | null) => (url && /^(\/(?!\/)|https?:)/i.test(url) ? url : undefined);

/**
 * The document's attached files (docinfo.attachments), newest first, each a link; a new one is
 * uploaded with upload_file against the document (doctype, docname), as Frappe's sidebar does.
 */
export function Attachments({ doctype, name, attachments, canAttach, onChange }: Props) {
  const { upload, loading } = useFrappeFileUpload();
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const headingId = useId();
  const onFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (!file) return;
    setError(null);
    setDone(null);
    try {
      // Private, as Frappe's uploader makes a document's attachments: served only to those who may read it.
      await upload(file, { isPrivate: true, doctype, docname: name });
      setDone(text.timeline.attached(file.name));
      input.value = '';
      onChange();
    } catch (e) {
      setError(e);
    }
  };
  // Newest first when the server says when (a stable sort keeps its order otherwise).
  const files = [...(attachments ?? [])].sort((a, b) => (b.creation ?? '').localeCompare(a.creation ?? ''));
  return (
    <div className="attachments" aria-labelledby={headingId} role="group">
      <h3 id={headingId}>{text.timeline.attachments}</h3>
      {attachments && files.length === 0 && <p className="state">{text.timeline.noAttachments}</p>}
      {files.length > 0 && (
        <ul>
          {files.map((f) => {
            const url = safeUrl(f.file_url);
            const label = f.file_name || f.file_url || f.name;
            return (
              <li key={f.name}>
                {url ? (
                  <a href={url} target="_blank" rel="noopener noreferrer">
                    {label}
                  </a>
                ) : (
                  label
                )}
                {(f.is_private === 1 || f.is_private === true) && <span className="tag">{text.timeline.private}</span>}
              </li>
            );
          })}
        </ul>
      )}
      {canAttach && (
        <label className="attach-file">
          <span>{text.timeline.attach}</span>
          <input type="file" disabled={loading} onChange={(e) => void onFile(e.target)} />
        </label>
      )}
      <div aria-live="polite" className="attach-status">
        {loading && <p className="state">{text.timeline.attaching}</p>}
        {done && <p className="notice notice-ok">{done}</p>}
      </div>
      {error !== null && <ErrorNotice error={error} title={text.timeline.attachFailed} />}
    </div>
  );
}
